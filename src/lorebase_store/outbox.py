"""The outbox: committed events in sequence order, published to NATS JetStream by the feed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update

from lorebase_store.tables import outbox
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class OutboxEvent:
    sequence: int
    domain_id: int
    branch: str
    type: str
    revision: str | None
    event: dict[str, Any]


def _event(row: Any) -> OutboxEvent:
    return OutboxEvent(row.sequence, row.domain_id, row.branch, row.type, row.revision, row.event)


class OutboxTxn(TxnBase):
    async def events_after(self, after: int, *, limit: int) -> list[OutboxEvent]:
        rows = await self.conn.execute(
            select(outbox).where(outbox.c.sequence > after).order_by(outbox.c.sequence).limit(limit)
        )
        return [OutboxEvent(r.sequence, r.domain_id, r.branch, r.type, r.revision, r.event) for r in rows]

    async def unpublished(self, *, limit: int) -> list[OutboxEvent]:
        rows = await self.conn.execute(
            select(outbox).where(outbox.c.published_at.is_(None)).order_by(outbox.c.sequence).limit(limit)
        )
        return [_event(row) for row in rows]

    async def mark_published(self, sequences: list[int], at: datetime) -> None:
        if sequences:
            await self.conn.execute(
                update(outbox).where(outbox.c.sequence.in_(sequences)).values(published_at=at)
            )

    async def publication_state(self) -> tuple[int, int]:
        """(highest sequence below which every event is published, events not yet published)."""
        first_pending = await self.conn.scalar(
            select(func.min(outbox.c.sequence)).where(outbox.c.published_at.is_(None))
        )
        pending = await self.conn.scalar(
            select(func.count()).select_from(outbox).where(outbox.c.published_at.is_(None))
        )
        if first_pending is None:
            last = await self.conn.scalar(select(func.max(outbox.c.sequence)))
            return int(last or 0), 0
        return int(first_pending) - 1, int(pending or 0)


__all__ = ["OutboxEvent", "OutboxTxn"]
