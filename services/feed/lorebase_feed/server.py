"""`lorebase feed`: the change feed service (outbox relay to JetStream, polling changes, event stream,
webhooks registry) and the memory change journal reads."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import datetime

import grpc

from lorebase import event_loop, metrics, metrics_scraped
from lorebase.clients import ClientSettings, KeeperClient
from lorebase.config import Settings
from lorebase.grpc_serve import serve, service_name
from lorebase.ids import utc_now
from lorebase.logs import configure_service_logging
from lorebase.rate_limits import RateLimiter
from lorebase.tracing import configure_service_tracing
from lorebase.v1 import feed_pb2, feed_pb2_grpc, memory_pb2, memory_pb2_grpc
from lorebase_feed.api import FeedServicer
from lorebase_feed.hub import Hub
from lorebase_feed.memory import MemoryJournalServicer
from lorebase_feed.relay import Relay, Retention, connect_nats, ensure_stream
from lorebase_feed.subjects import Subjects
from lorebase_store import Database, Txn


async def _publication(txn: Txn, fence: int) -> tuple[int, int, int, datetime | None]:
    through, pending = await txn.publication_state(fence)
    metrics_scraped.OUTBOX_PARKED.set(await txn.parked_events())
    metrics_scraped.set_memory_consumer_lags(await txn.consumer_lags(limit=metrics_scraped.TOP))
    return through, pending, await txn.last_sequence(), await txn.oldest_unpublished_at()


def publication_metrics(db: Database, relay: Relay) -> Callable[[], Awaitable[None]]:
    """The refresh of feed's /metrics: outbox backlog, parked events, feed lag, the relay's fence and
    publications, and the memory consumers' lag (lorebase.metrics_scraped)."""
    counted = 0

    async def refresh() -> None:
        nonlocal counted
        fence = relay.fence.safe
        through, pending, last, oldest = await db.read("feed_metrics", _publication, fence)
        metrics.OUTBOX_BACKLOG.set(pending)
        metrics.FEED_PUBLISHED_SEQUENCE.set(through)
        metrics.FEED_LAST_SEQUENCE.set(last)
        metrics.FEED_LAG_EVENTS.set(max(0, last - through))
        metrics.FEED_LAG_SECONDS.set(max(0.0, (utc_now() - oldest).total_seconds()) if oldest else 0.0)
        metrics.FEED_FENCE_SEQUENCE.set(fence)
        published = relay.published
        if published > counted:
            metrics.FEED_EVENTS_PUBLISHED.inc(published - counted)
            counted = published

    return refresh


def register(
    db: Database, servicer: FeedServicer, server: grpc.aio.Server, limits: RateLimiter | None = None
) -> None:
    """Feed's servicers: Feed (publication, changes, events, webhooks) and MemoryJournal."""
    feed_pb2_grpc.add_FeedServicer_to_server(servicer, server)
    memory_pb2_grpc.add_MemoryJournalServicer_to_server(MemoryJournalServicer(db, limits), server)


async def run(settings: Settings) -> int:
    model = settings.model
    url, nats_url = model.database.url, model.nats.url
    if not url or not nats_url:
        raise SystemExit("feed needs database.url and nats.url (LOREBASE_DATABASE_URL, LOREBASE_NATS_URL)")
    db = Database.connect(url, pool_size=4)
    await db.check_schema()
    metrics_scraped.watch_database(db)
    nc = await connect_nats(nats_url)
    js = nc.jetstream()
    nats = model.nats
    stream = nats.stream
    subjects = Subjects(nats.domain_subject_prefix, nats.subject_prefix, nats.legacy_subjects)
    retention = Retention(max_age_s=nats.max_age_s, max_bytes=nats.max_bytes, max_msgs=nats.max_msgs)
    await ensure_stream(js, stream, subjects, replicas=nats.stream_replicas, retention=retention)
    relay = Relay(
        db, js, subjects=subjects, stream=stream, park_after_attempts=model.nats.relay.park_after_attempts
    )
    hub = Hub()
    await hub.start(js, stream=stream, prefix=subjects.prefix)
    metrics_scraped.FEED_EVENT_STREAMS.set_function(lambda: hub.subscribers)
    services = model.services
    keeper = KeeperClient(ClientSettings(address=services.keeper.address, deadline_s=services.deadline_s))
    servicer = FeedServicer(db, stream=stream, keeper=keeper, hub=hub, fence=relay.fence, settings=settings)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))

    async def on_stop() -> None:
        stop.set()
        with contextlib.suppress(Exception):
            await task
        await hub.stop()
        await keeper.close()
        # NATS may already be gone (it is stopped after the services, or was killed): a close that fails
        # then has nothing left to flush.
        with contextlib.suppress(Exception):
            await nc.drain()
        await db.close()

    return await serve(
        "feed",
        services.feed.listen,
        lambda server: register(db, servicer, server, RateLimiter.of(model.keeper.rate_limits)),
        services=(service_name(feed_pb2, "Feed"), service_name(memory_pb2, "MemoryJournal")),
        on_stop=on_stop,
        grace_s=services.shutdown_grace_s,
        metrics_listen=services.feed.metrics_listen,
        loop_lag_ms=services.loop_lag_ms,
        metrics_refresh=publication_metrics(db, relay),
    )


def main(settings: Settings) -> int:
    configure_service_logging("feed", settings)
    configure_service_tracing("feed", settings)
    try:
        return event_loop.run(run(settings))
    except KeyboardInterrupt:
        return 0


__all__ = ["main", "publication_metrics", "register", "run"]
