"""Webhooks: the registry rows (`webhooks`) and their deliveries (`webhook_deliveries`), with what a
delivery pass reads besides (the `webhooks` cursor, outbox events, invocations, the schemas events'
Revisions were committed under), and
where a webhook created now starts (`start_position`).

The delivery pass is lorebase_scribe.webhook_delivery.deliver_pending.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import and_, bindparam, delete, func, insert, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.outbox import OutboxEvent, outbox_event
from lorebase_store.tables import (
    domains,
    feed_cursors,
    invocations,
    outbox,
    revisions,
    schema_versions,
    webhook_deliveries,
    webhooks,
)
from lorebase_store.txn import TxnBase

if TYPE_CHECKING:  # the store's Txn mixes this module's WebhooksTxn in
    from lorebase_store.store import Txn


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
        return {row.sequence: outbox_event(row) for row in rows}

    async def invocations_by_id_full(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Invocations with their (clear) canonical parameters: for re-rendering cleared values."""
        rows = await self.conn.execute(
            select(
                invocations.c.id, invocations.c.principal, invocations.c.parameters, invocations.c.created_at
            ).where(invocations.c.id.in_(sorted(set(ids))))
        )
        return {row.id: dict(row._mapping) for row in rows}

    async def revision_schemas(
        self, revisions_of: list[tuple[int, str]]
    ) -> dict[tuple[int, str], dict[str, Any]]:
        """The schema document each (Domain, Revision) was committed under (schema_versions; the
        Domain's creation schema for a Revision that names none)."""
        if not revisions_of:
            return {}
        wanted = sorted(set(revisions_of))
        rows = await self.conn.execute(
            select(revisions.c.domain_id, revisions.c.id, schema_versions.c.document, domains.c.schema)
            .select_from(
                revisions.join(domains, domains.c.id == revisions.c.domain_id).outerjoin(
                    schema_versions,
                    and_(
                        schema_versions.c.domain_id == revisions.c.domain_id,
                        schema_versions.c.digest == revisions.c.schema_digest,
                    ),
                )
            )
            .where(tuple_(revisions.c.domain_id, revisions.c.id).in_(wanted))
        )
        return {(row.domain_id, row.id): row.document or row.schema for row in rows}

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

    async def pending_by_webhook(self, *, limit: int) -> list[tuple[str, int, datetime]]:
        """(webhook id, pending deliveries, when the oldest was queued) of the `limit` webhooks with
        the most pending: the backlog metrics per target (lorebase.metrics_scraped)."""
        count = func.count().label("pending")
        rows = await self.conn.execute(
            select(webhook_deliveries.c.webhook_id, count, func.min(webhook_deliveries.c.created_at))
            .where(webhook_deliveries.c.status == "pending")
            .group_by(webhook_deliveries.c.webhook_id)
            .order_by(count.desc(), webhook_deliveries.c.webhook_id)
            .limit(limit)
        )
        return [(str(row[0]), int(row[1]), row[2]) for row in rows]

    async def pending_deliveries(self) -> int:
        """Pending deliveries of every webhook."""
        return int(
            await self.conn.scalar(
                select(func.count())
                .select_from(webhook_deliveries)
                .where(webhook_deliveries.c.status == "pending")
            )
            or 0
        )

    async def event(self, sequence: int) -> OutboxEvent | None:
        row = (await self.conn.execute(select(outbox).where(outbox.c.sequence == sequence))).first()
        if row is None:
            return None
        return outbox_event(row)

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

    async def next_attempt_at(self) -> datetime | None:
        """When the earliest pending delivery is due (None: none is pending)."""
        found = await self.conn.scalar(
            select(func.min(webhook_deliveries.c.next_attempt_at)).where(
                webhook_deliveries.c.status == "pending"
            )
        )
        return cast(datetime | None, found)

    async def count_deliveries(self, status: str) -> int:
        return int(
            await self.conn.scalar(
                select(func.count())
                .select_from(webhook_deliveries)
                .where(webhook_deliveries.c.status == status)
            )
            or 0
        )


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


__all__ = ["DeliveryRow", "WebhookRow", "WebhooksTxn", "start_position"]
