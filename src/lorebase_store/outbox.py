"""The outbox: committed events in sequence order, published to NATS JetStream by the feed.

Sequences are taken before commit, so they commit out of order: every reader goes only as far as
the fence (lorebase_store.fence), never past a sequence an in-flight transaction can still fill.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select, update

from lorebase_store.tables import outbox
from lorebase_store.txn import TxnBase

# The relay runs these on every pass (a pass follows each commit): through the driver
# (TxnBase.driver), without SQLAlchemy's cost per statement.
_SEQUENCE_TAKEN = (
    "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('outbox', 'sequence')::regclass), 0)"
)
_TAKE_XID = "SELECT pg_current_xact_id()::text"
# After a restore (OutboxTxn.skip_sequences_past): wait for every outbox writer, move the sequence,
# and keep the skipped range in feed_cursors under these names.
_LOCK_WRITERS = "LOCK TABLE outbox IN SHARE ROW EXCLUSIVE MODE"
_LAST_SEQUENCE = "SELECT max(sequence) FROM outbox"
_SKIP_TO = "SELECT setval(pg_get_serial_sequence('outbox', 'sequence'), $1)"
_KEEP_POSITION = (
    "INSERT INTO feed_cursors (name, position) VALUES ($1, $2) "
    "ON CONFLICT (name) DO UPDATE SET position = excluded.position"
)
_POSITIONS = "SELECT name, position FROM feed_cursors WHERE name = ANY($1::text[])"
SKIPPED_FROM = "outbox.restore.skipped_from"
SKIPPED_THROUGH = "outbox.restore.skipped_through"
# The fence's candidate (lorebase_store.fence): `taken`, then an xid, in this order. A MATERIALIZED CTE
# is run to its row before the outer query's target list (which takes the xid) is evaluated.
_FENCE_CANDIDATE = """
WITH s AS MATERIALIZED (
  SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('outbox', 'sequence')::regclass), 0) AS taken
)
SELECT s.taken, pg_current_xact_id()::text FROM s
"""
_OLDEST_RUNNING = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text"
_UNPUBLISHED = """
SELECT sequence, domain_id, branch, type, revision, event, traceparent FROM outbox
 WHERE published_at IS NULL AND sequence <= $2 ORDER BY sequence LIMIT $1
"""
# The relay's pass (lorebase_feed.relay): its advisory lock and, when it got it, the events it is to
# publish, in one statement. One row without an event when there is none (or no lock).
_LEAD_AND_UNPUBLISHED = """
SELECT l.leading, o.sequence, o.domain_id, o.branch, o.type, o.revision, o.event, o.traceparent
  FROM (SELECT pg_try_advisory_xact_lock($3) AS leading) AS l
  LEFT JOIN LATERAL (
    SELECT sequence, domain_id, branch, type, revision, event, traceparent FROM outbox
     WHERE l.leading AND published_at IS NULL AND sequence <= $2 ORDER BY sequence LIMIT $1
  ) AS o ON true
 ORDER BY o.sequence
"""
_MARK_PUBLISHED = "UPDATE outbox SET published_at = $1 WHERE sequence = ANY($2::bigint[])"


_NO_FENCE = 2**63 - 1  # unpublished() without a fence: every sequence


@dataclass(frozen=True)
class OutboxEvent:
    sequence: int
    domain_id: int
    branch: str
    type: str
    revision: str | None
    event: dict[str, Any]
    # The W3C traceparent of the commit that wrote it (migration 0016); None: not traced.
    traceparent: str | None = None

    def document(self) -> dict[str, Any]:
        """The event as followers receive it: the stored document with its sequence."""
        return {"sequence": self.sequence, **self.event}


def outbox_event(row: Any) -> OutboxEvent:
    """The OutboxEvent of a row of `outbox`."""
    return OutboxEvent(
        row.sequence, row.domain_id, row.branch, row.type, row.revision, row.event, row.traceparent
    )


class OutboxTxn(TxnBase):
    async def events_after(
        self,
        after: int,
        *,
        upto: int,
        limit: int,
        domain_id: int | None = None,
        branch: str | None = None,
        types: tuple[str, ...] = (),
    ) -> list[OutboxEvent]:
        """Events with `after < sequence <= upto` (upto: a fence), oldest first."""
        cond: Any = and_(outbox.c.sequence > after, outbox.c.sequence <= upto)
        if domain_id is not None:
            cond = and_(cond, outbox.c.domain_id == domain_id)
        if branch is not None:
            cond = and_(cond, outbox.c.branch == branch)
        if types:
            cond = and_(cond, outbox.c.type.in_(types))
        rows = await self.conn.execute(select(outbox).where(cond).order_by(outbox.c.sequence).limit(limit))
        return [outbox_event(row) for row in rows]

    async def revision_events(
        self, domain_id: int, revisions: list[str], branch: str
    ) -> dict[str, OutboxEvent]:
        """The `revision.committed` event of each Revision: the one written for `branch` when there
        is one (a fast-forward writes one per branch), else where the Revision was committed."""
        if not revisions:
            return {}
        rows = await self.conn.execute(
            select(outbox)
            .where(
                outbox.c.domain_id == domain_id,
                outbox.c.type == "revision.committed",
                outbox.c.revision.in_(revisions),
            )
            .order_by(outbox.c.sequence)
        )
        found: dict[str, OutboxEvent] = {}
        for row in rows:
            event = outbox_event(row)
            assert event.revision is not None
            if event.revision not in found or (
                event.branch == branch and found[event.revision].branch != branch
            ):
                found[event.revision] = event
        return found

    async def unpublished(self, *, limit: int, upto: int | None = None) -> list[OutboxEvent]:
        driver = await self.driver()
        rows = await driver.fetch(_UNPUBLISHED, limit, _NO_FENCE if upto is None else upto)
        return [OutboxEvent(*row) for row in rows]

    async def lead_and_unpublished(self, lock_key: int, *, limit: int, upto: int) -> list[OutboxEvent] | None:
        """Take the transaction-scoped advisory lock `lock_key` if it is free and, in the same
        statement, read the unpublished events up to `upto` (None: another transaction holds the
        lock). The events are read in the statement's snapshot, taken before the lock: a lock that
        another relay released in between may show events it has just marked as unpublished; the
        caller publishes those again and JetStream drops the copies by Nats-Msg-Id."""
        driver = await self.driver()
        rows = await driver.fetch(_LEAD_AND_UNPUBLISHED, limit, upto, lock_key)
        if not rows[0][0]:
            return None
        return [OutboxEvent(*row[1:]) for row in rows if row[1] is not None]

    async def mark_published(self, sequences: list[int], at: datetime) -> None:
        if sequences:
            driver = await self.driver()
            await driver.execute(_MARK_PUBLISHED, at, sequences)

    async def park(self, parked: list[tuple[int, str]], at: datetime) -> None:
        """Park events that cannot be published: marked published (the relay goes on) with the error."""
        for sequence, error in parked:
            await self.conn.execute(
                update(outbox)
                .where(outbox.c.sequence == sequence)
                .values(published_at=at, parked_at=at, publish_error=error[:2000])
            )

    async def parked_events(self) -> int:
        """How many events were parked (never published)."""
        return int(
            await self.conn.scalar(
                select(func.count()).select_from(outbox).where(outbox.c.parked_at.is_not(None))
            )
            or 0
        )

    async def oldest_pending_at(self, upto: int) -> datetime | None:
        """When the oldest event at or below `upto` (the fence) still waiting to be published was
        committed (None: the relay is not behind its fence)."""
        first = (
            select(func.min(outbox.c.sequence))
            .where(outbox.c.published_at.is_(None), outbox.c.sequence <= upto)
            .scalar_subquery()
        )
        return await self.conn.scalar(select(outbox.c.created_at).where(outbox.c.sequence == first))

    async def sequence_taken(self) -> int:
        """The last outbox sequence handed out, committed or not (sequences are not transactional)."""
        driver = await self.driver()
        return int(await driver.fetchval(_SEQUENCE_TAKEN) or 0)

    async def skip_sequences_past(self, through: int) -> int | None:
        """When the outbox holds no event up to `through`, the stream's last (`evt_<through>`): the
        database was restored from a backup taken before the stream's last events. Hand out
        sequences after `through` from now on, so that a new event never reuses a lost one's
        `evt_<sequence>` id (NATS's duplicate window, webhook receivers and event stream clients
        would take it for the lost one), and keep the range of the lost ones (feed_cursors) so that
        a client whose last event was one of them is told to resync. Holds a lock that waits for the
        transactions writing to the outbox, so that none is still to commit a lower sequence.
        Returns the first lost sequence, or None when the outbox holds `evt_<through>`."""
        driver = await self.driver()
        await driver.execute(_LOCK_WRITERS)
        last = int(await driver.fetchval(_LAST_SEQUENCE) or 0)
        if through <= last:
            return None
        if through > int(await driver.fetchval(_SEQUENCE_TAKEN) or 0):
            await driver.execute(_SKIP_TO, through)
        await driver.execute(_KEEP_POSITION, SKIPPED_FROM, last + 1)
        await driver.execute(_KEEP_POSITION, SKIPPED_THROUGH, through)
        return last + 1

    async def skipped_sequences(self) -> tuple[int, int] | None:
        """The range of sequences skipped after the last restore (`skip_sequences_past`), if any."""
        driver = await self.driver()
        rows = await driver.fetch(_POSITIONS, [SKIPPED_FROM, SKIPPED_THROUGH])
        found = {row[0]: int(row[1]) for row in rows}
        if SKIPPED_FROM not in found or SKIPPED_THROUGH not in found:
            return None
        return found[SKIPPED_FROM], found[SKIPPED_THROUGH]

    async def fence_candidate(self) -> tuple[int, int]:
        """(taken, xid): the last outbox sequence handed out, then a transaction id of this
        transaction, taken after it (one statement: run it outside a transaction, Database.read_one)."""
        driver = await self.driver()
        row = await driver.fetchrow(_FENCE_CANDIDATE)
        return int(row[0]), int(row[1])

    async def take_xid(self) -> int:
        """Give this transaction its id: the fence runs it in a transaction that it then rolls back,
        a webhook's creation before it reads its start position (lorebase_store.webhooks)."""
        driver = await self.driver()
        return int(await driver.fetchval(_TAKE_XID) or 0)

    async def oldest_running_xid(self) -> int:
        """The oldest transaction id still in progress as of this statement (xmin of its snapshot)."""
        driver = await self.driver()
        return int(await driver.fetchval(_OLDEST_RUNNING) or 0)

    async def last_sequence(self) -> int:
        return int(await self.conn.scalar(select(func.max(outbox.c.sequence))) or 0)

    async def oldest_unpublished_at(self) -> datetime | None:
        """When the oldest event not yet published was committed (None: every event is published)."""
        first = select(func.min(outbox.c.sequence)).where(outbox.c.published_at.is_(None)).scalar_subquery()
        return await self.conn.scalar(select(outbox.c.created_at).where(outbox.c.sequence == first))

    async def publication_state(self, fence: int | None = None) -> tuple[int, int]:
        """(highest sequence below which every event is published, events not yet published).

        With a fence, published_through never passes it (a sequence above may still commit)."""
        first_pending = await self.conn.scalar(
            select(func.min(outbox.c.sequence)).where(outbox.c.published_at.is_(None))
        )
        pending = await self.conn.scalar(
            select(func.count()).select_from(outbox).where(outbox.c.published_at.is_(None))
        )
        if first_pending is None:
            through = int(await self.conn.scalar(select(func.max(outbox.c.sequence))) or 0)
        else:
            through = int(first_pending) - 1
        if fence is not None:
            through = min(through, fence)
        return through, int(pending or 0)


__all__ = ["OutboxEvent", "OutboxTxn", "outbox_event"]
