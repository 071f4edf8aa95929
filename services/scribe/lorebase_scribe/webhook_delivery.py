"""A webhook delivery pass, `deliver_pending`.

A pass (Scribe runs it periodically, with lorebase_scribe.webhooks.HttpxSender):

1. **Fan-out** (webhook_fan_out.py). Outbox events after the cursor `webhooks` (feed_cursors) up to
   the outbox fence become one pending delivery per matching webhook, and the cursor moves, in one
   transaction per page. A delivery is keyed (webhook, sequence), so a repeated fan-out adds
   nothing. A webhook gets only the events after its `start_after` (`start_position`, taken when
   it is created).
2. **Re-sealing** (webhook_resealing.py). Up to `batch` signing keys stored unsealed or under a
   previous key are sealed again under the current key.
3. **Delivery** (webhook_attempts.py, webhook_clearances.py, webhook_vault.py: vault values read
   when the delivery is sent). Due deliveries are sent `concurrency`
   at a time; none starts after `pass_timeout_s` (those left wait for the next pass, without
   counting an attempt). An answer 2xx marks the delivery delivered. Anything else counts an
   attempt and schedules the next one (full jitter, never before the receiver's Retry-After:
   webhook_attempts.py), or marks it dead after `max_attempts`.
4. **Retention** (webhook_retention.py). Delivered and dead deliveries whose last attempt ended
   more than `retention_days` ago are deleted, `_PURGE_BATCH` rows per transaction, until none is
   left or the pass is past `pass_timeout_s` (one batch at least; the next pass goes on).

With tracing on, each attempt at an event whose commit was traced is a span of that trace
(`deliver webhook`, an error when the target did not answer 2xx), and the POST carries its
`traceparent` to the target (the httpx instrumentation; lorebase.tracing).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from lorebase import tracing
from lorebase.ids import utc_now
from lorebase.webhook_secrets import Sealer
from lorebase_scribe.webhook_attempts import (
    DeliverySettings,
    Sender,
    SendResult,
    attempt_outcome,
    given_back,
    send_attempt,
)
from lorebase_scribe.webhook_clearances import cleared_inputs, delivery_document
from lorebase_scribe.webhook_fan_out import fan_out
from lorebase_scribe.webhook_resealing import reseal
from lorebase_scribe.webhook_retention import purge
from lorebase_scribe.webhook_vault import reveal_delivery
from lorebase_store.outbox import OutboxEvent
from lorebase_store.webhooks import DeliveryRow, WebhookRow

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database
    from lorebase_store.store import Txn


@dataclass
class PassResult:
    queued: int = 0
    delivered: int = 0
    failed: int = 0
    dead: int = 0
    resealed: int = 0
    left: int = 0  # due but not started before pass_timeout_s
    purged: int = 0  # delivered and dead deliveries deleted (retention_days)
    # Attempts by (webhook id, outcome: delivered, failed, dead), for the metrics per target.
    by_webhook: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)


# Seconds a claim lasts past the last moment an attempt of its pass can end.
LEASE_MARGIN_S = 10.0


async def deliver_pending(
    db: Database, sender: Sender, sealer: Sealer, settings: DeliverySettings, *, now: datetime | None = None
) -> PassResult:
    """One delivery pass (see the module docstring)."""
    result = PassResult()
    result.queued = await fan_out(db)
    result.resealed = await reseal(db, sealer, batch=settings.batch)
    at = now or utc_now()
    started = time.monotonic()
    gate = asyncio.Semaphore(max(settings.concurrency, 1))
    limit = max(settings.concurrency, 1) * 50

    def clock() -> datetime:
        """The pass's time (`now`, default the wall clock) plus what the pass has taken so far: the
        next attempt is scheduled from when this one ended."""
        return at + timedelta(seconds=time.monotonic() - started)

    # A claim lasts past the last moment an attempt of this pass can end (none starts after
    # pass_timeout_s, each is cut off after timeout_s), plus a margin for recording the outcomes: a
    # Scribe that dies mid-page leaves its claimed deliveries to another one after that.
    lease = timedelta(seconds=settings.pass_timeout_s + settings.timeout_s + LEASE_MARGIN_S)

    # DomainSchema by (Domain id, Revision): the schema each event's Revision was committed under,
    # parsed once per pass.
    schemas: dict[tuple[int, str], Any] = {}

    async def one(
        delivery: DeliveryRow,
        hook: WebhookRow | None,
        event: OutboxEvent | None,
        claimed_at: datetime,
        cleared: dict[str, dict[str, Any]],
    ) -> tuple[str, dict[str, Any]]:
        async with gate:
            if time.monotonic() - started > settings.pass_timeout_s:
                return "left", given_back(delivery, claimed_at)  # no attempt counted
            if hook is None or event is None:  # deleted since the claim
                gone = SendResult(None, "the webhook or its event is gone")
                return "gone", attempt_outcome(
                    dataclasses.replace(settings, max_attempts=0), delivery, gone, clock()
                )[1]
            with tracing.follow(
                "deliver webhook",
                event.traceparent or "",
                kind=tracing.SpanKind.PRODUCER,
                attributes={
                    "lorebase.webhook": hook.id,
                    "lorebase.delivery": delivery.id,
                    "lorebase.sequence": event.sequence,
                    "lorebase.attempt": delivery.attempts + 1,
                },
            ) as span:
                document = delivery_document(hook, event, cleared, schemas)
                document = await reveal_delivery(db, sealer, hook, event, document, schemas)
                sent = await send_attempt(sender, sealer, hook, event, delivery, document)
                if not sent.ok:
                    tracing.failed(span, sent.error or f"the target answered {sent.status}")
                return attempt_outcome(settings, delivery, sent, clock())

    async def run_page() -> int:
        """Claim, send and record one page; how many deliveries it held."""
        claimed_at = clock()
        page = await db.run_interaction(
            "webhook_claim", lambda txn: txn.claim_due(claimed_at, claimed_at + lease, limit=limit)
        )
        if not page:
            return 0

        async def load(txn: Txn) -> tuple[dict[str, WebhookRow], dict[int, OutboxEvent]]:
            return (
                await txn.webhooks_by_id([d.webhook_id for d in page]),
                await txn.events_by_sequence([d.sequence for d in page]),
            )

        hooks, events = await db.read("webhook_delivery_load", load)
        cleared = await cleared_inputs(db, page, hooks, events, schemas)
        outcomes = await asyncio.gather(
            *(one(d, hooks.get(d.webhook_id), events.get(d.sequence), claimed_at, cleared) for d in page)
        )
        rows = [{"b_id": d.id, **values} for d, (_, values) in zip(page, outcomes, strict=True)]
        await db.run_interaction("webhook_delivery_record", lambda txn: txn.record_attempts(rows))
        for delivery, (outcome, _) in zip(page, outcomes, strict=True):
            if outcome in ("delivered", "failed", "dead"):
                counted = (delivery.webhook_id, outcome)
                result.by_webhook[counted] = result.by_webhook.get(counted, 0) + 1
            if outcome == "delivered":
                result.delivered += 1
            elif outcome == "failed":
                result.failed += 1
            elif outcome == "dead":
                result.dead += 1
            elif outcome == "left":
                result.left += 1
        return len(page)

    # Pages of due deliveries until one is not full or the pass is out of time: a backlog drains
    # in one pass rather than one page per scribe.webhooks.interval_s.
    while await run_page() == limit:
        if result.left or time.monotonic() - started > settings.pass_timeout_s:
            break
    result.purged = await purge(
        db, at - timedelta(days=settings.retention_days), until=started + settings.pass_timeout_s
    )
    return result


__all__ = ["PassResult", "deliver_pending"]
