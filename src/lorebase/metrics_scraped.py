"""Metrics read when /metrics is scraped: how full the database pools are, how far behind the
outbox, the webhook targets and the memory journal's consumers are, how many event streams are open.

Each is a gauge an operator alerts on (deploy/helm/lorebase/templates/prometheusrule.yaml,
docs/operations.md). The series per webhook and per memory consumer are the `TOP` furthest behind
(their names are made by users: a bounded number of series whatever their count); with more, the
whole is also reported without a label (`lorebase_webhook_backlog_total_deliveries`,
`lorebase_memory_consumer_max_lag_entries`). The pools are read from the process's Database handles
(`watch_database`, by each service at start); the backlogs by the feed's and Scribe's refresh
functions (lorebase_feed.server, lorebase_scribe.server), from PostgreSQL, with the other gauges.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Protocol

from prometheus_client import REGISTRY, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from lorebase.ids import utc_now

TOP = 20  # series per webhook and per memory consumer

WEBHOOK_BACKLOG = Gauge(
    "lorebase_webhook_backlog_deliveries",
    f"Pending webhook deliveries by webhook id (the {TOP} webhooks with the most).",
    ["webhook"],
)
WEBHOOK_OLDEST_PENDING = Gauge(
    "lorebase_webhook_oldest_pending_seconds",
    f"Age of the oldest pending delivery by webhook id (the {TOP} webhooks with the most pending).",
    ["webhook"],
)
WEBHOOK_BACKLOG_TOTAL = Gauge(
    "lorebase_webhook_backlog_total_deliveries", "Pending webhook deliveries of every webhook."
)
MEMORY_CONSUMER_LAG = Gauge(
    "lorebase_memory_consumer_lag_entries",
    f"Journal entries after a memory consumer's checkpoint, by consumer name (the {TOP} furthest behind).",
    ["consumer"],
)
MEMORY_CONSUMER_MAX_LAG = Gauge(
    "lorebase_memory_consumer_max_lag_entries", "The largest lag of any memory consumer's checkpoint."
)
OUTBOX_PARKED = Gauge(
    "lorebase_outbox_parked_events", "Outbox events parked so far: never published to NATS (docs/feed.md)."
)
GATEWAY_EVENT_STREAMS = Gauge(
    "lorebase_gateway_event_streams", "Event streams (SSE) this gateway process is serving to clients."
)
FEED_EVENT_STREAMS = Gauge(
    "lorebase_feed_event_streams",
    "Event streams this feed process is serving (a gateway's shared ones included).",
)


class _Pooled(Protocol):
    def pool_usage(self) -> list[tuple[str, int, int]]: ...


class _Pools(Collector):
    """`lorebase_db_pool_connections_in_use` and `_max` by pool, of every watched Database."""

    def __init__(self) -> None:
        self.databases: weakref.WeakSet[Any] = weakref.WeakSet()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        in_use = GaugeMetricFamily(
            "lorebase_db_pool_connections_in_use",
            "Database connections checked out of the pool, by pool (engine: SQLAlchemy's; hot: the hottest reads').",
            labels=["pool"],
        )
        most = GaugeMetricFamily(
            "lorebase_db_pool_connections_max",
            "The most connections the pool opens, by pool.",
            labels=["pool"],
        )
        totals: dict[str, tuple[int, int]] = {}
        for database in list(self.databases):
            for pool, used, limit in database.pool_usage():
                had = totals.get(pool, (0, 0))
                totals[pool] = (had[0] + used, had[1] + limit)
        for pool, (used, limit) in sorted(totals.items()):
            in_use.add_metric([pool], used)
            most.add_metric([pool], limit)
        yield in_use
        yield most


POOLS = _Pools()
REGISTRY.register(POOLS)


def watch_database(database: _Pooled) -> None:
    """Report `database`'s pools in the saturation gauges for as long as it lives."""
    POOLS.databases.add(database)


def _replace(gauge: Gauge, values: dict[str, float]) -> None:
    """Set a labelled gauge to exactly `values` (series no longer reported are removed)."""
    gauge.clear()
    for label, value in values.items():
        gauge.labels(label).set(value)


def set_webhook_backlog(pending: list[tuple[str, int, datetime]], total: int) -> None:
    """The backlog gauges from WebhooksTxn.pending_by_webhook(limit=TOP) and the total pending."""
    now = utc_now()
    _replace(WEBHOOK_BACKLOG, {hook: count for hook, count, _ in pending})
    _replace(
        WEBHOOK_OLDEST_PENDING,
        {hook: max((now - oldest).total_seconds(), 0.0) for hook, _, oldest in pending},
    )
    WEBHOOK_BACKLOG_TOTAL.set(total)


def set_memory_consumer_lags(lags: list[tuple[str, int]]) -> None:
    """The consumer lag gauges from MemoryJournalTxn.consumer_lags(limit=TOP)."""
    _replace(MEMORY_CONSUMER_LAG, dict(lags))
    MEMORY_CONSUMER_MAX_LAG.set(max((lag for _, lag in lags), default=0))


__all__ = [
    "FEED_EVENT_STREAMS",
    "GATEWAY_EVENT_STREAMS",
    "MEMORY_CONSUMER_LAG",
    "MEMORY_CONSUMER_MAX_LAG",
    "OUTBOX_PARKED",
    "TOP",
    "WEBHOOK_BACKLOG",
    "WEBHOOK_BACKLOG_TOTAL",
    "WEBHOOK_OLDEST_PENDING",
    "set_memory_consumer_lags",
    "set_webhook_backlog",
    "watch_database",
]
