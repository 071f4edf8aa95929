"""Revisions and the branch history (one row per changed Record or Link per Revision).

A branch's first-parent history is its own Revisions plus, for a branch forked from another, the
history of that branch up to the fork point (`BranchChain`). Snapshots at an earlier Revision are
rebuilt from the history rows along that chain.

`RevisionsTxn` is the store's mixin for all of it, made of one mixin per family of reads:
`RevisionReadsTxn` here (Revisions by id, prefix or position, and the changes one Revision made),
`EntityHistoryTxn` (lorebase_store.entity_history: the history of one Record or Link) and
`SnapshotsTxn` (lorebase_store.snapshots: a history as of a position, and the changes after one).
What they read and return is in lorebase_store.branch_history.
"""

from __future__ import annotations

from sqlalchemy import func, select

from lorebase_store.branch_history import RENAMED_FROM, BranchChain, HistoryRow, RevisionRow, revision_row
from lorebase_store.entity_history import EntityHistoryTxn
from lorebase_store.snapshots import SnapshotsTxn, snapshot_of
from lorebase_store.tables import history, revisions
from lorebase_store.txn import TxnBase

_GET_REVISIONS = """
SELECT id, branch, generation, parents, author, message, origin, stats, created_at, schema_digest
  FROM revisions WHERE domain_id = $1 AND id = ANY(CAST($2 AS text[]))
"""


class RevisionReadsTxn(TxnBase):
    async def get_revision(self, domain_id: int, revision_id: str) -> RevisionRow | None:
        row = (
            await self.conn.execute(
                select(revisions).where(revisions.c.domain_id == domain_id, revisions.c.id == revision_id)
            )
        ).first()
        return None if row is None else revision_row(row)

    async def get_revisions(self, domain_id: int, ids: list[str]) -> dict[str, RevisionRow]:
        if not ids:
            return {}
        driver = await self.driver()  # every lineage and context pack asks: prepared once per connection
        rows = await driver.fetch(_GET_REVISIONS, domain_id, sorted(set(ids)))
        return {row["id"]: RevisionRow(*row.values()) for row in rows}

    async def first_parent_revisions(
        self,
        domain_id: int,
        chain: BranchChain,
        *,
        after: int,
        upto: int,
        limit: int,
        newest_first: bool = False,
    ) -> list[RevisionRow]:
        """Revisions on a first-parent history with `after < generation <= upto`, by generation."""
        order = revisions.c.generation.desc() if newest_first else revisions.c.generation
        rows = await self.conn.execute(
            select(revisions)
            .where(
                revisions.c.domain_id == domain_id,
                chain.clause(revisions),
                revisions.c.generation > after,
                revisions.c.generation <= upto,
            )
            .order_by(order)
            .limit(limit)
        )
        return [revision_row(row) for row in rows]

    async def schema_revisions(self, domain_id: int, chain: BranchChain, *, after: int) -> list[RevisionRow]:
        """The schema change sets (origin `schema`) on a first-parent history after a generation,
        oldest first."""
        rows = await self.conn.execute(
            select(revisions)
            .where(
                revisions.c.domain_id == domain_id,
                chain.clause(revisions),
                revisions.c.generation > after,
                revisions.c.origin["type"].astext == "schema",
            )
            .order_by(revisions.c.generation)
        )
        return [revision_row(row) for row in rows]

    async def records_changed_by(
        self, domain_id: int, revision_ids: list[str], *, limit: int
    ) -> list[tuple[str, str, str]]:
        """(Kind, key, change) of the Records the Revisions `revision_ids` changed, at most `limit`,
        in the order they were written (a Revision's history rows, found by its branch and
        generation, whichever name its branch goes by now)."""
        if not revision_ids:
            return []
        made = (
            select(revisions.c.branch, revisions.c.generation)
            .where(revisions.c.domain_id == domain_id, revisions.c.id.in_(revision_ids))
            .subquery()
        )
        rows = await self.conn.execute(
            select(history.c.name, history.c.key, history.c.change)
            .join(made, (made.c.branch == history.c.branch) & (made.c.generation == history.c.generation))
            .where(history.c.domain_id == domain_id, history.c.entity == "record")
            .order_by(history.c.seq)
            .limit(limit)
        )
        return [(r.name, r.key, r.change) for r in rows]

    async def revisions_with_prefix(
        self, domain_id: int, prefix: str, *, limit: int = 2
    ) -> list[RevisionRow]:
        rows = await self.conn.execute(
            select(revisions)
            .where(revisions.c.domain_id == domain_id, revisions.c.id.startswith(prefix, autoescape=True))
            .order_by(revisions.c.id)
            .limit(limit)
        )
        return [revision_row(row) for row in rows]

    async def revision_changes(
        self, domain_id: int, branch: str, generation: int, *, after: int, limit: int
    ) -> list[tuple[int, str, str, str, str, list[str], str | None]]:
        """The changes one Revision made (its history rows, in the order it made them), after the
        history row `after`: (row, entity, name, key, change, attributes, the name a rename moved
        it from or None)."""
        rows = await self.conn.execute(
            select(
                history.c.seq,
                history.c.entity,
                history.c.name,
                history.c.key,
                history.c.change,
                history.c.attributes,
                history.c.provenance[RENAMED_FROM].astext.label("renamed_from"),
            )
            .where(
                history.c.domain_id == domain_id,
                history.c.branch == branch,
                history.c.generation == generation,
                history.c.seq > after,
            )
            .order_by(history.c.seq)
            .limit(limit)
        )
        return [(r.seq, r.entity, r.name, r.key, r.change, list(r.attributes), r.renamed_from) for r in rows]

    async def revision_moves(self, domain_id: int, branch: str, generation: int) -> int:
        """How many Records and Links one Revision moved to a new Kind or Relation name."""
        count = await self.conn.scalar(
            select(func.count())
            .select_from(history)
            .where(
                history.c.domain_id == domain_id,
                history.c.branch == branch,
                history.c.generation == generation,
                history.c.provenance.has_key(RENAMED_FROM),
            )
        )
        return int(count or 0)


class RevisionsTxn(RevisionReadsTxn, EntityHistoryTxn, SnapshotsTxn):
    """Revisions and the branch history: every family's reads on one mixin (lorebase_store.store.Txn)."""


__all__ = [
    "RENAMED_FROM",
    "BranchChain",
    "HistoryRow",
    "RevisionReadsTxn",
    "RevisionRow",
    "RevisionsTxn",
    "snapshot_of",
]
