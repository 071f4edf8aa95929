"""Memory change journals: one per namespace, entries appended under a row lock on the journal, and
consumer checkpoints.

Sequences commit in order: a group of commands locks its journal row (`SELECT ... FOR UPDATE`,
memory_writes.begin_memory_group) and holds the lock until its transaction ends; it appends its
entries at last_sequence + 1, + 2, ... and moves `last_sequence` past them in the same transaction.
The next group reads the journal only after this one committed (or rolled back). A reader that sees
`last_sequence` = n therefore sees every entry up to n, and no in-flight transaction can later fill
a sequence at or below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.memory_tables import memory_checkpoints, memory_journals
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class JournalRow:
    id: str
    namespace_key: str
    last_sequence: int
    last_chain: str


@dataclass(frozen=True)
class JournalEntryRow:
    journal_id: str
    sequence: int
    schema_version: int
    kind: str
    record_id: str
    record_revision: int
    author: str
    committed_at_millis: int
    change_digest: str
    chain_digest: str


@dataclass(frozen=True)
class CheckpointRow:
    consumer: str
    journal_id: str
    scope: dict[str, Any]
    contract_version: int
    sequence: int
    prefix_digest: str | None
    revision: int
    updated_at: datetime


def _journal(row: Any) -> JournalRow:
    return JournalRow(row.id, row.namespace_key, row.last_sequence, row.last_chain)


def _entry(row: Any) -> JournalEntryRow:
    return JournalEntryRow(
        row.journal_id,
        row.sequence,
        row.schema_version,
        row.kind,
        row.record_id,
        row.record_revision,
        row.author,
        row.committed_at_millis,
        row.change_digest,
        row.chain_digest,
    )


def _checkpoint(row: Any) -> CheckpointRow:
    return CheckpointRow(
        row.consumer,
        row.journal_id,
        row.scope,
        row.contract_version,
        row.sequence,
        row.prefix_digest,
        row.revision,
        row.updated_at,
    )


_JOURNAL_FOR = """
SELECT id, namespace_key, last_sequence, last_chain FROM memory_journals WHERE namespace_key = $1
"""

# The columns in JournalEntryRow's order.
_ENTRIES = """
SELECT journal_id, sequence, schema_version, kind, record_id, record_revision, author, committed_at_millis,
       change_digest, chain_digest
  FROM memory_journal_entries
 WHERE journal_id = $1 AND sequence > $2 AND sequence <= $3
 ORDER BY sequence
 LIMIT $4
"""


# A catch-up page in one statement, so in one snapshot (lorebase_feed.memory_changes): the journal
# row (part 0), the caller's capabilities on the scope (part 1, one row each), the entries of the
# page from the one at the page's start (its chain digest is the page's prefix) up to the fence
# (part 2), and the entry at `through` (part 3: the fence's digest when the page stops short).
# Rows share the entries' columns. The journal's id and last sequence are uncorrelated subqueries (one
# value each, known before the scan), so the entries come in the primary key's order and the scan
# stops at the page's end, whatever plan is cached. Parameters: $1 namespace key, $2 principal, $3 tenant,
# $4 project, $5 agent, $6 mission, $7 the page's start (after's sequence, 0: from the first),
# $8 through's sequence (NULL: the journal's last), $9 how many entries.
_PAGE = """
WITH j AS (SELECT id, last_sequence, last_chain FROM memory_journals WHERE namespace_key = $1)
SELECT 0 AS part, j.id, j.last_sequence, NULL::integer, NULL::text, NULL::text, NULL::bigint, NULL::text,
       NULL::bigint, NULL::text, j.last_chain
  FROM j
UNION ALL
SELECT 1, NULL, NULL, NULL, c.capability, NULL, NULL, NULL, NULL, NULL, NULL
  FROM (SELECT DISTINCT jsonb_array_elements_text(capabilities) AS capability FROM memory_grants
         WHERE principal_id = $2 AND tenant = $3 AND project_id = $4 AND agent_id = $5
           AND mission_id IS NOT DISTINCT FROM $6::text) AS c
UNION ALL
(SELECT 2, e.journal_id, e.sequence, e.schema_version, e.kind, e.record_id, e.record_revision, e.author,
        e.committed_at_millis, e.change_digest, e.chain_digest
   FROM memory_journal_entries e
  WHERE e.journal_id = (SELECT id FROM j)
    AND e.sequence > greatest($7::bigint - 1, 0)
    AND e.sequence <= coalesce($8::bigint, (SELECT last_sequence FROM j))
  ORDER BY e.sequence
  LIMIT $9)
UNION ALL
SELECT 3, e.journal_id, e.sequence, e.schema_version, e.kind, e.record_id, e.record_revision, e.author,
       e.committed_at_millis, e.change_digest, e.chain_digest
  FROM memory_journal_entries e
 WHERE e.journal_id = (SELECT id FROM j) AND e.sequence = $8::bigint
"""


@dataclass(frozen=True)
class JournalPage:
    """What a catch-up page reads, in one snapshot."""

    journal: JournalRow | None
    capabilities: set[str]
    entries: list[JournalEntryRow]  # in sequence order, from the page's start (when > 0) to the fence
    through: JournalEntryRow | None  # the entry at the `through` cursor's sequence


class MemoryJournalTxn(TxnBase):
    async def consumer_lags(self, *, limit: int) -> list[tuple[str, int]]:
        """(consumer name, journal entries after its checkpoint) of the `limit` consumers furthest
        behind, the largest lag per name across subjects: the consumer lag metric
        (lorebase.metrics_scraped)."""
        lag = func.max(memory_journals.c.last_sequence - memory_checkpoints.c.sequence).label("lag")
        rows = await self.conn.execute(
            select(memory_checkpoints.c.consumer, lag)
            .select_from(
                memory_checkpoints.join(
                    memory_journals, memory_journals.c.id == memory_checkpoints.c.journal_id
                )
            )
            .group_by(memory_checkpoints.c.consumer)
            .order_by(lag.desc(), memory_checkpoints.c.consumer)
            .limit(limit)
        )
        return [(str(row[0]), max(int(row[1] or 0), 0)) for row in rows]

    async def lock_memory_journal(
        self, namespace_key: str, new_id: str, genesis: str, columns: dict[str, Any], at: datetime
    ) -> JournalRow:
        """The journal of a namespace (created on its first entry), locked until the transaction ends."""
        await self.conn.execute(
            pg_insert(memory_journals)
            .values(
                id=new_id,
                namespace_key=namespace_key,
                last_sequence=0,
                last_chain=genesis,
                created_at=at,
                **columns,
            )
            .on_conflict_do_nothing(index_elements=["namespace_key"])
        )
        row = (
            await self.conn.execute(
                select(memory_journals)
                .where(memory_journals.c.namespace_key == namespace_key)
                .with_for_update()
            )
        ).one()
        return _journal(row)

    async def delete_memory_journal(self, journal_id: str) -> None:
        """Drop a journal this transaction created and wrote no entry to (it never becomes visible)."""
        await self.conn.execute(delete(memory_journals).where(memory_journals.c.id == journal_id))

    async def memory_journal_for(self, namespace_key: str) -> JournalRow | None:
        driver = await self.driver()
        row = await driver.fetchrow(_JOURNAL_FOR, namespace_key)
        return None if row is None else JournalRow(*row)

    async def memory_journal_entries(
        self, journal_id: str, after: int, through: int, limit: int
    ) -> list[JournalEntryRow]:
        """Entries with after < sequence <= through, in sequence order, at most `limit` (a catch-up
        page: through the driver, each row straight into its dataclass)."""
        driver = await self.driver()
        rows = await driver.fetch(_ENTRIES, journal_id, after, through, limit)
        return [JournalEntryRow(*row) for row in rows]

    async def memory_changes_page(
        self,
        namespace_key: str,
        caller: tuple[str, str],
        scope: tuple[str, str | None, str],
        start: int,
        through: int | None,
        limit: int,
    ) -> JournalPage:
        """A catch-up page of the journal of `namespace_key` in one statement (run it outside a
        transaction: Database.read_one): the journal, the capabilities of `caller` (principal,
        tenant) on `scope` (project, mission, agent), the entries `start` (when above 0) through
        the fence (`through`, or the journal's last sequence), at most `limit` after `start`, and
        the entry at `through`."""
        (principal, tenant), (project, mission, agent) = caller, scope
        driver = await self.driver()
        rows = await driver.fetch(
            _PAGE,
            namespace_key,
            principal,
            tenant,
            project,
            agent,
            mission,
            start,
            through,
            limit + (1 if start > 0 else 0),
        )
        journal: JournalRow | None = None
        capabilities: set[str] = set()
        entries: list[JournalEntryRow] = []
        at_through: JournalEntryRow | None = None
        for row in rows:
            part = row[0]
            if part == 0:
                journal = JournalRow(row[1], namespace_key, row[2], row[10])
            elif part == 1:
                capabilities.add(row[4])
            elif part == 2:
                entries.append(JournalEntryRow(*row[1:]))
            else:
                at_through = JournalEntryRow(*row[1:])
        entries.sort(key=lambda entry: entry.sequence)
        return JournalPage(journal, capabilities, entries, at_through)

    async def memory_journal_entry(self, journal_id: str, sequence: int) -> JournalEntryRow | None:
        driver = await self.driver()
        row = await driver.fetchrow(_ENTRIES, journal_id, sequence - 1, sequence, 1)
        return None if row is None else JournalEntryRow(*row)

    # Consumer checkpoints

    async def get_memory_checkpoint(
        self, tenant: str, subject: str, consumer: str, *, for_update: bool = False
    ) -> CheckpointRow | None:
        stmt = select(memory_checkpoints).where(
            memory_checkpoints.c.tenant == tenant,
            memory_checkpoints.c.subject == subject,
            memory_checkpoints.c.consumer == consumer,
        )
        if for_update:
            stmt = stmt.with_for_update()
        row = (await self.conn.execute(stmt)).first()
        return None if row is None else _checkpoint(row)

    async def insert_memory_checkpoint(self, tenant: str, subject: str, checkpoint: CheckpointRow) -> bool:
        """Insert a new checkpoint; False when one exists already (a concurrent first save)."""
        result = await self.conn.execute(
            pg_insert(memory_checkpoints)
            .values(tenant=tenant, subject=subject, **_checkpoint_values(checkpoint))
            .on_conflict_do_nothing()
        )
        return bool(result.rowcount)

    async def update_memory_checkpoint(
        self, tenant: str, subject: str, checkpoint: CheckpointRow, expected_revision: int
    ) -> bool:
        """Replace a checkpoint at `expected_revision`; False when its revision moved."""
        result = await self.conn.execute(
            update(memory_checkpoints)
            .where(
                memory_checkpoints.c.tenant == tenant,
                memory_checkpoints.c.subject == subject,
                memory_checkpoints.c.consumer == checkpoint.consumer,
                memory_checkpoints.c.revision == expected_revision,
            )
            .values(**_checkpoint_values(checkpoint))
        )
        return bool(result.rowcount)

    async def list_memory_checkpoints(
        self, tenant: str, subject: str, after: str | None, limit: int
    ) -> list[CheckpointRow]:
        """A subject's checkpoints in consumer name order, after `after` (exclusive), at most `limit`."""
        stmt = select(memory_checkpoints).where(
            memory_checkpoints.c.tenant == tenant, memory_checkpoints.c.subject == subject
        )
        if after is not None:
            stmt = stmt.where(memory_checkpoints.c.consumer > after)
        rows = await self.conn.execute(stmt.order_by(memory_checkpoints.c.consumer).limit(limit))
        return [_checkpoint(row) for row in rows]

    async def delete_memory_checkpoint(self, tenant: str, subject: str, consumer: str, revision: int) -> bool:
        """Delete a checkpoint at `revision`; False when it is gone or its revision moved."""
        result = await self.conn.execute(
            delete(memory_checkpoints).where(
                memory_checkpoints.c.tenant == tenant,
                memory_checkpoints.c.subject == subject,
                memory_checkpoints.c.consumer == consumer,
                memory_checkpoints.c.revision == revision,
            )
        )
        return bool(result.rowcount)


def _checkpoint_values(checkpoint: CheckpointRow) -> dict[str, Any]:
    return {
        "consumer": checkpoint.consumer,
        "journal_id": checkpoint.journal_id,
        "scope": checkpoint.scope,
        "contract_version": checkpoint.contract_version,
        "sequence": checkpoint.sequence,
        "prefix_digest": checkpoint.prefix_digest,
        "revision": checkpoint.revision,
        "updated_at": checkpoint.updated_at,
    }


__all__ = ["CheckpointRow", "JournalEntryRow", "JournalRow", "MemoryJournalTxn"]
