"""Coverage statistics: per branch and Kind, how many Records there are and how many lack each
Attribute's value, counted at a Revision (by Scribe, or on demand when none were counted yet)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, literal, not_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.query import QuerySpec, record_rows
from lorebase_store.revisions import BranchChain
from lorebase_store.tables import records, resolve_misses, statistics
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class KindStatistics:
    kind: str
    revision: str | None
    records: int
    missing: dict[str, int]


_GET_STATISTICS = """
SELECT kind, revision, records, missing FROM statistics
 WHERE domain_id = $1 AND branch = $2 AND kind = ANY(CAST($3 AS text[]))
"""


class StatisticsTxn(TxnBase):
    async def value_counts(
        self,
        domain_id: int,
        branch: str,
        kind: str,
        attribute: str,
        *,
        limit: int,
        snapshot: tuple[BranchChain, tuple[str, int]] | None = None,
    ) -> list[tuple[str, int]]:
        """The distinct values of an Attribute with their Records, at most `limit` + 1 of them, at the
        head or, with `snapshot`, as of that Revision."""
        src = record_rows(QuerySpec(domain_id, branch, (kind,), None, (), limit, 0, snapshot))
        value = src.c["values"][attribute].astext
        rows = await self.conn.execute(
            select(value.label("value"), func.count().label("n"))
            .where(value.is_not(None))
            .group_by(value)
            .order_by(value)
            .limit(limit + 1)
        )
        return [(row.value, int(row.n)) for row in rows]

    async def record_misses(self, domain_id: int, phrases: list[str], at: datetime) -> None:
        if not phrases:
            return
        stmt = pg_insert(resolve_misses).values(
            [
                {"domain_id": domain_id, "phrase": p, "count": 1, "first_seen": at, "last_seen": at}
                for p in phrases
            ]
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["domain_id", "phrase"],
            set_={"count": resolve_misses.c.count + 1, "last_seen": stmt.excluded.last_seen},
        )
        await self.conn.execute(stmt)

    async def misses(self, domain_id: int, *, limit: int = 100, min_count: int = 1) -> list[tuple[str, int]]:
        """The most frequent misses of a Domain (at least `min_count` each), most frequent first."""
        rows = await self.conn.execute(
            select(resolve_misses.c.phrase, resolve_misses.c.count)
            .where(resolve_misses.c.domain_id == domain_id, resolve_misses.c.count >= min_count)
            .order_by(resolve_misses.c.count.desc(), resolve_misses.c.phrase)
            .limit(limit)
        )
        return [(row.phrase, int(row[1])) for row in rows]

    async def purge_misses(self, domain_id: int, before: datetime) -> int:
        """Forget the misses last seen before `before`; how many."""
        result = await self.conn.execute(
            delete(resolve_misses).where(
                resolve_misses.c.domain_id == domain_id, resolve_misses.c.last_seen < before
            )
        )
        return int(result.rowcount or 0)

    async def count_kind(
        self, domain_id: int, branch: str, kind: str, attributes: list[str]
    ) -> tuple[int, dict[str, int]]:
        """(Records, missing per Attribute) of a Kind at the head, in one statement."""
        columns: list[Any] = [func.count().label("records")]
        columns += [
            func.count().filter(not_(records.c["values"].has_key(literal(name)))).label(f"m{index}")
            for index, name in enumerate(attributes)
        ]
        row = (
            await self.conn.execute(
                select(*columns).where(
                    records.c.domain_id == domain_id, records.c.branch == branch, records.c.kind == kind
                )
            )
        ).one()
        return int(row.records), {name: int(row[index + 1]) for index, name in enumerate(attributes)}

    async def save_statistics(
        self,
        domain_id: int,
        branch: str,
        kind: str,
        revision: str | None,
        counted: tuple[int, dict[str, int]],
        at: datetime,
    ) -> None:
        stmt = pg_insert(statistics).values(
            domain_id=domain_id,
            branch=branch,
            kind=kind,
            revision=revision,
            records=counted[0],
            missing=counted[1],
            counted_at=at,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["domain_id", "branch", "kind"],
            set_={
                "revision": stmt.excluded.revision,
                "records": stmt.excluded.records,
                "missing": stmt.excluded.missing,
                "counted_at": stmt.excluded.counted_at,
            },
        )
        await self.conn.execute(stmt)

    async def get_statistics(
        self, domain_id: int, branch: str, kinds: list[str]
    ) -> dict[str, KindStatistics]:
        """The counted statistics of these Kinds (the coverage of every query and resolve): through
        the driver, prepared once per connection (TxnBase.driver)."""
        driver = await self.driver()
        rows = await driver.fetch(_GET_STATISTICS, domain_id, branch, kinds)
        return {
            r["kind"]: KindStatistics(r["kind"], r["revision"], int(r["records"]), dict(r["missing"]))
            for r in rows
        }


__all__ = ["KindStatistics", "StatisticsTxn"]
