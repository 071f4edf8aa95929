"""Reconciliation candidates (migration 0015): pairs of Records of one Kind likely to be the same
thing, and the scans of a branch that found them.

One open candidate per pair (its two keys in byte order). Scribe's scan refreshes an open one and
drops the open ones that no longer hold; a decided one stays as it was, and a dismissed pair is
never proposed again, nor one whose accept waits in an open Proposal (`settled_pairs`). The trigram comparison of titles runs here, in SQL
(pg_trgm's `similarity`), over the materialised Records of the branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, select, text, union, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import proposals
from lorebase_store.tables import reconciliation_candidates as candidates
from lorebase_store.tables import reconciliation_scans as scans
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class CandidateRow:
    id: str
    branch: str
    kind: str
    record_a: str
    record_b: str
    score: float
    evidence: list[dict[str, Any]]
    status: str  # open | accepted | dismissed
    revision: str | None  # the head it was computed at
    created_at: datetime
    updated_at: datetime
    decided_by: str | None
    decided_at: datetime | None
    reason: str | None
    result: dict[str, Any] | None  # the Revision or Proposal an accept made


@dataclass(frozen=True)
class ScanRow:
    revision: str | None
    settings: dict[str, Any]
    scanned_at: datetime


def _row(r: Any) -> CandidateRow:
    return CandidateRow(
        r.id,
        r.branch,
        r.kind,
        r.record_a,
        r.record_b,
        float(r.score),
        list(r.evidence),
        r.status,
        r.revision,
        r.created_at,
        r.updated_at,
        r.decided_by,
        r.decided_at,
        r.reason,
        None if r.result is None else dict(r.result),
    )


class ReconciliationTxn(TxnBase):
    # Scans

    async def reconciliation_scan(self, domain_id: int, branch: str) -> ScanRow | None:
        row = (
            await self.conn.execute(
                select(scans).where(scans.c.domain_id == domain_id, scans.c.branch == branch)
            )
        ).first()
        return None if row is None else ScanRow(row.revision, dict(row.settings), row.scanned_at)

    async def save_reconciliation_scan(
        self, domain_id: int, branch: str, *, revision: str | None, settings: dict[str, Any], at: datetime
    ) -> None:
        stmt = pg_insert(scans).values(
            domain_id=domain_id, branch=branch, revision=revision, settings=settings, scanned_at=at
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["domain_id", "branch"],
            set_={"revision": revision, "settings": settings, "scanned_at": at},
        )
        await self.conn.execute(stmt)

    # What a scan compares

    async def similar_values(
        self, domain_id: int, branch: str, kind: str, attribute: str, *, threshold: float, limit: int
    ) -> list[tuple[str, str, float]]:
        """(key a, key b, similarity) of the pairs of Records of `kind` whose `attribute` values
        (case folded) have a pg_trgm similarity of at least `threshold`, key a < key b in byte
        order; most similar first, then by keys.

        The values go into a temporary table with a trigram GIN index (dropped at commit), and the
        self-join asks the index for each value's neighbours (`%`, with pg_trgm.similarity_threshold
        set for this transaction): comparing every pair through `similarity()` alone took 12 s of
        PostgreSQL time for 1,000 Records on a loaded machine and hit the statement timeout at 2,000.
        """
        await self.conn.execute(
            text(
                'CREATE TEMPORARY TABLE IF NOT EXISTS reconciliation_titles (key TEXT COLLATE "C", '
                "title TEXT) ON COMMIT DROP"
            )
        )
        await self.conn.execute(text("TRUNCATE reconciliation_titles"))
        await self.conn.execute(
            text(
                "INSERT INTO reconciliation_titles (key, title) SELECT key, lower(values ->> :attribute) "
                "FROM records WHERE domain_id = :domain_id AND branch = :branch AND kind = :kind "
                "AND values ->> :attribute IS NOT NULL"
            ),
            {"attribute": attribute, "domain_id": domain_id, "branch": branch, "kind": kind},
        )
        await self.conn.execute(
            text(
                "CREATE INDEX IF NOT EXISTS reconciliation_titles_trgm ON reconciliation_titles "
                "USING gin (title gin_trgm_ops)"
            )
        )
        await self.conn.execute(text("ANALYZE reconciliation_titles"))
        # `%` holds above the threshold: set it a hair lower and keep the exact bound below.
        await self.conn.execute(
            select(func.set_config("pg_trgm.similarity_threshold", str(max(threshold - 1e-6, 0.0)), True))
        )
        rows = await self.conn.execute(
            text(
                "SELECT a.key AS a, b.key AS b, similarity(a.title, b.title) AS similarity "
                "FROM reconciliation_titles a JOIN reconciliation_titles b "
                "ON a.title % b.title AND a.key < b.key "
                "WHERE similarity(a.title, b.title) >= :threshold "
                "ORDER BY similarity DESC, a.key, b.key LIMIT :limit"
            ),
            {"threshold": threshold, "limit": limit},
        )
        return [(r.a, r.b, float(r.similarity)) for r in rows]

    async def similarity(self, left: str, right: str) -> float:
        """pg_trgm's similarity of two strings, case folded (what `similar_values` compares)."""
        found = await self.conn.scalar(select(func.similarity(func.lower(left), func.lower(right))))
        return float(found or 0.0)

    async def settled_pairs(self, domain_id: int, branch: str) -> set[tuple[str, str, str]]:
        """(Kind, key a, key b) of the pairs a scan must not propose: the dismissed ones (never
        again), and those accepted as a Proposal that is still open (the merge waits for review)."""
        pair = (candidates.c.kind, candidates.c.record_a, candidates.c.record_b)
        mine = (candidates.c.domain_id == domain_id, candidates.c.branch == branch)
        dismissed = select(*pair).where(*mine, candidates.c.status == "dismissed")
        pending = (
            select(*pair)
            .select_from(
                candidates.join(
                    proposals,
                    and_(
                        proposals.c.domain_id == candidates.c.domain_id,
                        proposals.c.id == candidates.c.result["proposal"].astext,
                    ),
                )
            )
            .where(*mine, candidates.c.status == "accepted", proposals.c.status == "open")
        )
        rows = await self.conn.execute(union(dismissed, pending))
        return {(r.kind, r.record_a, r.record_b) for r in rows}

    async def open_candidates(self, domain_id: int, branch: str) -> list[CandidateRow]:
        rows = await self.conn.execute(
            select(candidates).where(
                candidates.c.domain_id == domain_id,
                candidates.c.branch == branch,
                candidates.c.status == "open",
            )
        )
        return [_row(r) for r in rows]

    # Writes of the scan

    async def save_candidates(self, domain_id: int, found: list[dict[str, Any]], *, at: datetime) -> None:
        """Add an open candidate for each pair (`id`, `branch`, `kind`, `record_a`, `record_b`,
        `score`, `evidence`, `revision`), or refresh the open one; 500 rows a statement."""
        for start in range(0, len(found), 500):
            stmt = pg_insert(candidates).values(
                [
                    {**row, "domain_id": domain_id, "status": "open", "created_at": at, "updated_at": at}
                    for row in found[start : start + 500]
                ]
            )
            stmt = stmt.on_conflict_do_update(
                index_elements=["domain_id", "branch", "kind", "record_a", "record_b"],
                index_where=text("status = 'open'"),  # the partial index's predicate, as written
                set_={
                    "score": stmt.excluded.score,
                    "evidence": stmt.excluded.evidence,
                    "revision": stmt.excluded.revision,
                    "updated_at": stmt.excluded.updated_at,
                },
            )
            await self.conn.execute(stmt)

    async def drop_open_candidates(self, domain_id: int, ids: list[str]) -> None:
        """Forget open candidates whose rule no longer holds (nothing was decided on them)."""
        if ids:
            await self.conn.execute(
                delete(candidates).where(
                    candidates.c.domain_id == domain_id,
                    candidates.c.id.in_(ids),
                    candidates.c.status == "open",
                )
            )

    # Reads and decisions

    async def list_candidates(
        self,
        domain_id: int,
        *,
        status: str | None,
        kinds: list[str],
        after: str,
        limit: int,
    ) -> list[CandidateRow]:
        """Candidates of `kinds` by id (ids grow with time), after the cursor `after`."""
        query = select(candidates).where(candidates.c.domain_id == domain_id, candidates.c.kind.in_(kinds))
        if status is not None:
            query = query.where(candidates.c.status == status)
        if after:
            query = query.where(candidates.c.id.collate("C") > after)
        rows = await self.conn.execute(query.order_by(candidates.c.id.collate("C")).limit(limit))
        return [_row(r) for r in rows]

    async def get_candidate(self, domain_id: int, id: str, *, lock: bool = False) -> CandidateRow | None:
        query = select(candidates).where(candidates.c.domain_id == domain_id, candidates.c.id == id)
        row = (await self.conn.execute(query.with_for_update() if lock else query)).first()
        return None if row is None else _row(row)

    async def decide_candidate(
        self,
        domain_id: int,
        id: str,
        *,
        status: str,
        principal: str,
        at: datetime,
        reason: str | None,
        result: dict[str, Any] | None,
    ) -> None:
        await self.conn.execute(
            update(candidates)
            .where(candidates.c.domain_id == domain_id, candidates.c.id == id)
            .values(
                status=status,
                decided_by=principal,
                decided_at=at,
                updated_at=at,
                reason=reason,
                result=result,
            )
        )


__all__ = ["CandidateRow", "ReconciliationTxn", "ScanRow"]
