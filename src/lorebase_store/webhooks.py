"""Webhooks: the registry rows, their deliveries, and `deliver_pending`, one delivery pass.

A pass (Scribe runs it periodically, with lorebase_scribe.webhooks.HttpxSender):

1. **Fan-out.** Outbox events after the cursor `webhooks` (feed_cursors) up to the outbox fence
   become one pending delivery per matching webhook, and the cursor moves, in one transaction per
   page. A delivery is keyed (webhook, sequence), so a repeated fan-out adds nothing. A webhook
   gets only the events after its `start_after` (`start_position`, taken when it is created).
2. **Re-sealing.** Up to `batch` signing keys stored unsealed or under a previous key are sealed
   again under the current key.
3. **Delivery.** Due deliveries are sent `concurrency` at a time; none starts after
   `pass_timeout_s` (those left wait for the next pass, without counting an attempt). An answer
   2xx marks the delivery delivered. Anything else counts an attempt and schedules the next one
   after `backoff_initial_s * 2^(attempts-1)` (at most `backoff_max_s`), or marks it dead after
   `max_attempts`.
4. **Retention.** Delivered and dead deliveries whose last attempt ended more than
   `retention_days` ago are deleted, `_PURGE_BATCH` rows per transaction, until none is left or
   the pass is past `pass_timeout_s` (one batch at least; the next pass goes on).
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase.ids import utc_now
from lorebase.webhook_secrets import Sealer, SecretKeyError, signature
from lorebase_store.outbox import OutboxEvent
from lorebase_store.tables import domains, feed_cursors, invocations, outbox, webhook_deliveries, webhooks
from lorebase_store.txn import TxnBase

if TYPE_CHECKING:  # the store's Txn mixes this module's WebhooksTxn in
    from lorebase_store.db import Database
    from lorebase_store.store import Txn

CURSOR = "webhooks"
_FAN_OUT_PAGE = 500
_PURGE_BATCH = 1000


@dataclass(frozen=True)
class WebhookRow:
    id: str
    domain_id: int
    url: str
    events: tuple[str, ...]
    branches: tuple[str, ...]
    clearances: tuple[str, ...]
    signing_key: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    start_after: int = 0  # the last outbox sequence handed out at its creation (start_position)

    def wants(self, event: OutboxEvent) -> bool:
        if event.sequence <= self.start_after:
            return False
        type_ok = any(
            pattern == event.type or (pattern == "operation.*" and event.type.startswith("operation."))
            for pattern in self.events
        )
        return type_ok and any(fnmatch.fnmatchcase(event.branch, pattern) for pattern in self.branches)


@dataclass(frozen=True)
class DeliveryRow:
    id: str
    webhook_id: str
    sequence: int
    type: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    last_status: int | None


def _webhook(row: Any) -> WebhookRow:
    return WebhookRow(
        row.id,
        row.domain_id,
        row.url,
        tuple(row.events),
        tuple(row.branches),
        tuple(row.clearances),
        row.signing_key,
        row.created_by,
        row.created_at,
        row.updated_at,
        row.start_after,
    )


def _delivery(row: Any) -> DeliveryRow:
    return DeliveryRow(
        row.id,
        row.webhook_id,
        row.sequence,
        row.type,
        row.status,
        row.attempts,
        row.next_attempt_at,
        row.last_error,
        row.last_status,
    )


class WebhooksTxn(TxnBase):
    async def insert_webhook(self, row: WebhookRow) -> None:
        await self.conn.execute(
            insert(webhooks).values(
                id=row.id,
                domain_id=row.domain_id,
                url=row.url,
                events=list(row.events),
                branches=list(row.branches),
                clearances=list(row.clearances),
                signing_key=row.signing_key,
                created_by=row.created_by,
                created_at=row.created_at,
                updated_at=row.updated_at,
                start_after=row.start_after,
            )
        )

    async def get_webhook(self, domain_id: int, webhook_id: str) -> WebhookRow | None:
        row = (
            await self.conn.execute(
                select(webhooks).where(webhooks.c.domain_id == domain_id, webhooks.c.id == webhook_id)
            )
        ).first()
        return None if row is None else _webhook(row)

    async def list_webhooks(self, domain_id: int | None = None) -> list[WebhookRow]:
        stmt = select(webhooks).order_by(webhooks.c.created_at, webhooks.c.id)
        if domain_id is not None:
            stmt = stmt.where(webhooks.c.domain_id == domain_id)
        return [_webhook(row) for row in await self.conn.execute(stmt)]

    async def update_webhook(self, webhook_id: str, **values: Any) -> None:
        await self.conn.execute(update(webhooks).where(webhooks.c.id == webhook_id).values(**values))

    async def delete_webhook(self, webhook_id: str) -> None:
        """The webhook and its deliveries (pending ones included)."""
        await self.conn.execute(
            delete(webhook_deliveries).where(webhook_deliveries.c.webhook_id == webhook_id)
        )
        await self.conn.execute(delete(webhooks).where(webhooks.c.id == webhook_id))

    async def cursor(self, name: str) -> int | None:
        return await self.conn.scalar(select(feed_cursors.c.position).where(feed_cursors.c.name == name))

    async def set_cursor(self, name: str, position: int) -> None:
        stmt = pg_insert(feed_cursors).values(name=name, position=position)
        await self.conn.execute(
            stmt.on_conflict_do_update(index_elements=["name"], set_={"position": stmt.excluded.position})
        )

    async def add_deliveries(self, rows: list[dict[str, Any]]) -> None:
        # The rows as parameters of one cached statement (batched by SQLAlchemy's insertmanyvalues),
        # not a VALUES list compiled anew for each page.
        if rows:
            await self.conn.execute(
                pg_insert(webhook_deliveries).on_conflict_do_nothing(
                    index_elements=["webhook_id", "sequence"]
                ),
                rows,
            )

    async def claim_due(self, now: datetime, lease_until: datetime, *, limit: int) -> list[DeliveryRow]:
        """Take up to `limit` due deliveries for this worker: their next_attempt_at moves to
        `lease_until`, and rows another worker is claiming right now are skipped. A worker that
        dies before recording its attempts leaves them due again once the lease ends."""
        due = (
            select(webhook_deliveries.c.id)
            .where(webhook_deliveries.c.status == "pending", webhook_deliveries.c.next_attempt_at <= now)
            .order_by(webhook_deliveries.c.next_attempt_at, webhook_deliveries.c.sequence)
            .limit(limit)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        rows = await self.conn.execute(
            update(webhook_deliveries)
            .where(webhook_deliveries.c.id.in_(due))
            .values(next_attempt_at=lease_until)
            .returning(*webhook_deliveries.c)
        )
        # RETURNING gives the new next_attempt_at; the caller keeps the old one as `due_at`.
        return sorted((_delivery(row) for row in rows), key=lambda d: d.sequence)

    async def webhooks_by_id(self, ids: list[str]) -> dict[str, WebhookRow]:
        rows = await self.conn.execute(select(webhooks).where(webhooks.c.id.in_(sorted(set(ids)))))
        return {row.id: _webhook(row) for row in rows}

    async def events_by_sequence(self, sequences: list[int]) -> dict[int, OutboxEvent]:
        rows = await self.conn.execute(select(outbox).where(outbox.c.sequence.in_(sorted(set(sequences)))))
        return {
            row.sequence: OutboxEvent(
                row.sequence, row.domain_id, row.branch, row.type, row.revision, row.event
            )
            for row in rows
        }

    async def invocations_by_id_full(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Invocations with their (clear) canonical parameters: for re-rendering cleared values."""
        rows = await self.conn.execute(
            select(
                invocations.c.id, invocations.c.principal, invocations.c.parameters, invocations.c.created_at
            ).where(invocations.c.id.in_(sorted(set(ids))))
        )
        return {row.id: dict(row._mapping) for row in rows}

    async def domain_schemas(self, domain_ids: list[int]) -> dict[int, dict[str, Any]]:
        rows = await self.conn.execute(
            select(domains.c.id, domains.c.schema).where(domains.c.id.in_(sorted(set(domain_ids))))
        )
        return {row.id: row.schema for row in rows}

    async def record_attempts(self, outcomes: list[dict[str, Any]]) -> None:
        """Each outcome: `b_id` and every column that an attempt sets (one statement, many rows)."""
        if outcomes:
            await self.conn.execute(
                update(webhook_deliveries)
                .where(webhook_deliveries.c.id == bindparam("b_id"))
                .values(
                    status=bindparam("status"),
                    attempts=bindparam("attempts"),
                    next_attempt_at=bindparam("next_attempt_at"),
                    last_error=bindparam("last_error"),
                    last_status=bindparam("last_status"),
                    finished_at=bindparam("finished_at"),
                ),
                outcomes,
            )

    async def deliveries_of(self, webhook_id: str) -> list[DeliveryRow]:
        rows = await self.conn.execute(
            select(webhook_deliveries)
            .where(webhook_deliveries.c.webhook_id == webhook_id)
            .order_by(webhook_deliveries.c.sequence)
        )
        return [_delivery(row) for row in rows]

    async def event(self, sequence: int) -> OutboxEvent | None:
        row = (await self.conn.execute(select(outbox).where(outbox.c.sequence == sequence))).first()
        if row is None:
            return None
        return OutboxEvent(row.sequence, row.domain_id, row.branch, row.type, row.revision, row.event)

    async def purge_deliveries(self, finished_before: datetime, *, limit: int) -> int:
        """Delete up to `limit` delivered or dead deliveries that finished before `finished_before`;
        how many."""
        old = (
            select(webhook_deliveries.c.id)
            .where(
                webhook_deliveries.c.status.in_(("delivered", "dead")),
                webhook_deliveries.c.finished_at < finished_before,
            )
            .limit(limit)
            .scalar_subquery()
        )
        result = await self.conn.execute(delete(webhook_deliveries).where(webhook_deliveries.c.id.in_(old)))
        return int(result.rowcount or 0)

    async def count_deliveries(self, status: str) -> int:
        return int(
            await self.conn.scalar(
                select(func.count())
                .select_from(webhook_deliveries)
                .where(webhook_deliveries.c.status == status)
            )
            or 0
        )


@dataclass(frozen=True)
class SendResult:
    status: int | None  # the HTTP status, None when no answer came
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Sender(Protocol):
    async def send(self, url: str, body: bytes, headers: dict[str, str]) -> SendResult: ...


@dataclass(frozen=True)
class DeliverySettings:
    max_attempts: int = 8
    backoff_initial_s: float = 5
    backoff_max_s: float = 3600
    concurrency: int = 8
    pass_timeout_s: float = 60
    batch: int = 100
    retention_days: float = 14

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> DeliverySettings:
        return cls(
            max_attempts=int(section.get("max_attempts", 8)),
            backoff_initial_s=float(section.get("backoff_initial_s", 5)),
            backoff_max_s=float(section.get("backoff_max_s", 3600)),
            concurrency=int(section.get("concurrency", 8)),
            pass_timeout_s=float(section.get("pass_timeout_s", 60)),
            batch=int(section.get("batch", 100)),
            retention_days=float(section.get("retention_days", 14)),
        )

    def backoff(self, attempts: int) -> float:
        return float(min(self.backoff_initial_s * 2 ** max(attempts - 1, 0), self.backoff_max_s))


@dataclass
class PassResult:
    queued: int = 0
    delivered: int = 0
    failed: int = 0
    dead: int = 0
    resealed: int = 0
    left: int = 0  # due but not started before pass_timeout_s
    purged: int = 0  # delivered and dead deliveries deleted (retention_days)


async def start_position(txn: Txn) -> int:
    """Where a webhook created in this transaction starts: the last outbox sequence handed out.
    Fan-out queues only later events for it, whatever the global cursor.

    The transaction takes its id first, as a writer does for the fence (lorebase_store.fence): an
    event that takes a sequence after this position is then below the fence only once this
    transaction has ended, so the fan-out page that reads it also sees the webhook (if it
    committed). An event whose transaction took its sequence before, and that commits after the
    webhook, is not delivered to it."""
    await txn.take_xid()
    return await txn.sequence_taken()


async def fan_out(db: Database) -> int:
    """Queue a delivery per event after the cursor (up to the fence) and matching webhook."""
    from lorebase_store.fence import Fence

    start = await db.read("webhook_cursor", lambda txn: txn.cursor(CURSOR))
    if start is None:
        # The first pass starts at the fence: webhooks receive what commits from now on. A fresh
        # fence stays at 0 while a write transaction that began before it runs; starting there
        # would deliver the whole history, so the cursor waits for a pass where it has moved.
        fence = await Fence().advance(db)
        if fence == 0 and await db.read_one("outbox_taken", lambda txn: txn.sequence_taken()) > 0:
            return 0
        await db.run_interaction("webhook_cursor_init", lambda txn: txn.set_cursor(CURSOR, fence))
        return 0
    upto = await Fence(safe=start).advance(db)
    queued = 0
    position = start
    while position < upto:

        async def page(txn: Txn, after: int = position) -> tuple[int, int]:
            events = await txn.events_after(after, upto=upto, limit=_FAN_OUT_PAGE)
            hooks: dict[int, list[WebhookRow]] = {}
            rows = []
            now = utc_now()
            for event in events:
                if event.domain_id not in hooks:
                    hooks[event.domain_id] = await txn.list_webhooks(event.domain_id)
                for hook in hooks[event.domain_id]:
                    if hook.wants(event):
                        rows.append(
                            {
                                "id": "dlv_" + secrets.token_hex(10),
                                "webhook_id": hook.id,
                                "sequence": event.sequence,
                                "type": event.type,
                                "status": "pending",
                                "attempts": 0,
                                "next_attempt_at": now,
                                "created_at": now,
                            }
                        )
            await txn.add_deliveries(rows)
            reached = upto if len(events) < _FAN_OUT_PAGE else events[-1].sequence
            await txn.set_cursor(CURSOR, reached)
            return reached, len(rows)

        position, count = await db.run_interaction("webhook_fan_out", page)
        queued += count
    return queued


async def purge(db: Database, finished_before: datetime, *, until: float | None = None) -> int:
    """Delete the delivered and dead deliveries that finished before `finished_before`, in
    transactions of _PURGE_BATCH rows, until none is left or `time.monotonic()` is past `until`
    (one batch at least); how many."""
    purged = 0
    while True:
        done = await db.run_interaction(
            "webhook_purge", lambda txn: txn.purge_deliveries(finished_before, limit=_PURGE_BATCH)
        )
        purged += done
        if done < _PURGE_BATCH or (until is not None and time.monotonic() > until):
            return purged


async def reseal(db: Database, sealer: Sealer, *, batch: int) -> int:
    """Seal up to `batch` signing keys stored unsealed or under a previous key with the current key."""
    if sealer.current is None:
        return 0

    async def run(txn: Txn) -> int:
        done = 0
        for hook in await txn.list_webhooks():
            if done >= batch:
                break
            if sealer.needs_resealing(hook.signing_key):
                try:
                    digest = sealer.unseal(hook.signing_key)
                except SecretKeyError:
                    continue  # its deliveries fail naming the setting
                await txn.update_webhook(hook.id, signing_key=sealer.seal(digest))
                done += 1
        return done

    return await db.run_interaction("webhook_reseal", run)


async def _send(
    sender: Sender,
    sealer: Sealer,
    hook: WebhookRow,
    event: OutboxEvent,
    delivery: DeliveryRow,
    document: dict[str, Any],
) -> SendResult:
    """One attempt: the event document, signed now with the webhook's key, POSTed by `sender`."""
    body = orjson.dumps(document)
    try:
        digest = sealer.unseal(hook.signing_key)
    except SecretKeyError as exc:
        return SendResult(None, str(exc))
    headers = {
        "Content-Type": "application/json",
        "Lorebase-Event": event.type,
        "Lorebase-Delivery": delivery.id,
        "Idempotency-Key": f"evt_{event.sequence}",
        "Lorebase-Signature": signature(digest, int(time.time()), body),
    }
    try:
        return await sender.send(hook.url, body, headers)
    except Exception as exc:  # a sender failure fails this attempt only
        return SendResult(None, f"{type(exc).__name__}: {exc}")


def _recorded(
    settings: DeliverySettings, delivery: DeliveryRow, result: SendResult, now: datetime
) -> tuple[str, dict[str, Any]]:
    """The outcome of an attempt and the columns that record it."""
    attempts = delivery.attempts + 1
    error = result.error or f"answered {result.status}"
    if result.ok:
        return "delivered", {
            "status": "delivered",
            "attempts": attempts,
            "next_attempt_at": now,
            "last_error": None,
            "last_status": result.status,
            "finished_at": now,
        }
    if attempts >= settings.max_attempts:
        return "dead", {
            "status": "dead",
            "attempts": attempts,
            "next_attempt_at": now,
            "last_error": error,
            "last_status": result.status,
            "finished_at": now,
        }
    return "failed", {
        "status": "pending",
        "attempts": attempts,
        "next_attempt_at": now + timedelta(seconds=settings.backoff(attempts)),
        "last_error": error,
        "last_status": result.status,
        "finished_at": None,
    }


def _wants_reveal(hook: WebhookRow | None, event: OutboxEvent | None) -> bool:
    return (
        hook is not None
        and event is not None
        and bool(hook.clearances)
        and event.type.startswith("operation.")
        and bool(event.event.get("invocation_id"))
    )


async def _cleared_inputs(
    db: Database,
    page: list[DeliveryRow],
    hooks: dict[str, WebhookRow],
    events: dict[int, OutboxEvent],
    schemas: dict[int, Any],
) -> dict[str, dict[str, Any]]:
    """The invocations behind the page's operation events bound for webhooks with clearances (by
    id), and the schemas of their Domains (parsed into `schemas`)."""
    wanted = [
        events[d.sequence] for d in page if _wants_reveal(hooks.get(d.webhook_id), events.get(d.sequence))
    ]
    if not wanted:
        return {}
    from lorebase.schema import load_schema

    async def load(txn: Txn) -> tuple[dict[str, dict[str, Any]], dict[int, dict[str, Any]]]:
        return (
            await txn.invocations_by_id_full([str(e.event["invocation_id"]) for e in wanted]),
            await txn.domain_schemas([e.domain_id for e in wanted if e.domain_id not in schemas]),
        )

    found, documents = await db.read("webhook_reveal_load", load)
    for domain_id, document in documents.items():
        try:
            schemas[domain_id] = load_schema(document)
        except Exception:  # a schema that no longer loads reveals nothing
            schemas[domain_id] = None
    return found


def _document(
    hook: WebhookRow, event: OutboxEvent, cleared: dict[str, dict[str, Any]], schemas: dict[int, Any]
) -> dict[str, Any]:
    """What this webhook receives: the stored document, with the values its clearances cover
    re-rendered (lorebase.operation_events) for operation events."""
    document = event.document()
    if not _wants_reveal(hook, event):
        return document
    invocation = cleared.get(str(event.event["invocation_id"]))
    schema = schemas.get(event.domain_id)
    if invocation is None or schema is None:
        return document
    from lorebase.operation_events import revealed

    return revealed(document, schema, invocation, hook.clearances)


def _unchanged(delivery: DeliveryRow, due_at: datetime) -> dict[str, Any]:
    """A claimed delivery given back as it was (not started before pass_timeout_s): due again."""
    return {
        "status": "pending",
        "attempts": delivery.attempts,
        "next_attempt_at": due_at,
        "last_error": delivery.last_error,
        "last_status": delivery.last_status,
        "finished_at": None,
    }


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
    # pass_timeout_s); webhooks.timeout_s is not known here, so a generous margin stands in for it.
    lease = timedelta(seconds=settings.pass_timeout_s + 600)

    schemas: dict[int, Any] = {}  # DomainSchema by domain id, parsed once per pass

    async def one(
        delivery: DeliveryRow,
        hook: WebhookRow | None,
        event: OutboxEvent | None,
        claimed_at: datetime,
        cleared: dict[str, dict[str, Any]],
    ) -> tuple[str, dict[str, Any]]:
        async with gate:
            if time.monotonic() - started > settings.pass_timeout_s:
                return "left", _unchanged(delivery, claimed_at)  # no attempt counted
            if hook is None or event is None:  # deleted since the claim
                gone = SendResult(None, "the webhook or its event is gone")
                return "gone", _recorded(
                    dataclasses.replace(settings, max_attempts=0), delivery, gone, clock()
                )[1]
            document = _document(hook, event, cleared, schemas)
            sent = await _send(sender, sealer, hook, event, delivery, document)
            return _recorded(settings, delivery, sent, clock())

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
        cleared = await _cleared_inputs(db, page, hooks, events, schemas)
        outcomes = await asyncio.gather(
            *(one(d, hooks.get(d.webhook_id), events.get(d.sequence), claimed_at, cleared) for d in page)
        )
        rows = [{"b_id": d.id, **values} for d, (_, values) in zip(page, outcomes, strict=True)]
        await db.run_interaction("webhook_delivery_record", lambda txn: txn.record_attempts(rows))
        for outcome, _ in outcomes:
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


__all__ = [
    "DeliveryRow",
    "DeliverySettings",
    "PassResult",
    "SendResult",
    "Sender",
    "WebhookRow",
    "WebhooksTxn",
    "deliver_pending",
    "fan_out",
    "purge",
    "reseal",
    "start_position",
]
