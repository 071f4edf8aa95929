"""A first-parent history read as of a position or between two: snapshots (the Records and Links of
a Kind or Relation as of a Revision, rebuilt from the history rows along the chain: what a read at
an earlier Revision or on an overlay branch sees) and the changes after a position (what a merge
brings over, what moved a count since it was taken).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Text, any_, func, literal, select
from sqlalchemy.dialects.postgresql import ARRAY, distinct_on

from lorebase_store.branch_history import BranchChain, HistoryRow, history_row
from lorebase_store.stored_form import history_after, history_columns
from lorebase_store.tables import history
from lorebase_store.txn import TxnBase


def snapshot_of(
    domain_id: int,
    chain: BranchChain,
    upto: tuple[str, int],
    entity: str,
    name: str,
    keys: list[str] | None = None,
) -> Any:
    """A subquery of the last history row of each Record/Link of one Kind/Relation as of a position
    (deleted ones included: filter on `change`). Its `after` holds the values."""
    cond = [
        history.c.domain_id == domain_id,
        history.c.entity == entity,
        history.c.name == name,
        chain.clause(history, upto),
    ]
    if keys is not None:
        cond.append(history.c.key == any_(literal(list(keys), ARRAY(Text))))
    kept = (
        select(history)
        .where(*cond)
        .ext(distinct_on(history.c.key))
        .order_by(history.c.key, history.c.generation.desc(), history.c.seq.desc())
        .subquery()
    )
    return select(*history_columns(kept)).subquery()


class SnapshotsTxn(TxnBase):
    async def touched_between(
        self, domain_id: int, chain: BranchChain, older: tuple[str, int] | None, newer: tuple[str, int]
    ) -> list[tuple[str, str, str]]:
        """(entity, name, key) of everything changed after `older` up to `newer` on one history."""
        cond = [history.c.domain_id == domain_id, chain.clause(history, newer)]
        if older is not None:
            cond.append(~chain.clause(history, older))
        rows = await self.conn.execute(
            select(history.c.entity, history.c.name, history.c.key)
            .where(*cond)
            .group_by(history.c.entity, history.c.name, history.c.key)
            .order_by(history.c.entity, history.c.name, history.c.key)
        )
        return [(r.entity, r.name, r.key) for r in rows]

    async def snapshot_entities(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int],
        entity: str,
        name: str,
        keys: list[str] | None = None,
    ) -> list[HistoryRow]:
        """The last change of each Record/Link (of one Kind/Relation) as of a position; deleted ones excluded."""
        latest = snapshot_of(domain_id, chain, upto, entity, name, keys)
        rows = await self.conn.execute(
            select(latest).where(latest.c.change != "deleted").order_by(latest.c.key)
        )
        return [history_row(row) for row in rows]

    async def changes_after(
        self,
        domain_id: int,
        chain: BranchChain,
        generation: int,
        *,
        entity: str | None = None,
        name: str | None = None,
        limit: int | None = None,
    ) -> list[HistoryRow]:
        """Every change on a history after a generation (of one Kind or Relation when named), oldest
        first: what a merge brings over, or what moved a count since it was taken."""
        cond = [history.c.domain_id == domain_id, chain.clause(history), history.c.generation > generation]
        if entity is not None:
            cond.append(history.c.entity == entity)
        if name is not None:
            cond.append(history.c.name == name)
        stmt = select(*history_columns()).where(*cond).order_by(history.c.generation, history.c.seq)
        if limit is not None:
            stmt = stmt.limit(limit)
        return [history_row(row) for row in await self.conn.execute(stmt)]

    async def count_changes_after(
        self, domain_id: int, chain: BranchChain, generation: int, *, entity: str, limit: int
    ) -> int:
        """How many changes of `entity` a history has after a generation, counted up to `limit`
        (in PostgreSQL: a million of them need not be read to know there are too many)."""
        cond = [
            history.c.domain_id == domain_id,
            chain.clause(history),
            history.c.generation > generation,
            history.c.entity == entity,
        ]
        some = select(literal(1)).where(*cond).limit(limit).subquery()
        return int((await self.conn.execute(select(func.count()).select_from(some))).scalar_one())

    async def attributes_changed_after(
        self, domain_id: int, chain: BranchChain, generation: int, kinds: list[str]
    ) -> set[tuple[str, str]]:
        """(Kind, Attribute) of every Record change after a generation, of these Kinds: what a change
        lists in `attributes` (a created or deleted Record lists all of its own). One pass over the
        history in PostgreSQL, its rows not read: a schema change's million changes of one Attribute
        leave the counts of the others as they were (lorebase_keeper reads/value_counts.py)."""
        named = func.jsonb_array_elements_text(history.c.attributes).table_valued("value").lateral()
        cond = [
            history.c.domain_id == domain_id,
            chain.clause(history),
            history.c.generation > generation,
            history.c.entity == "record",
            history.c.name == any_(literal(kinds, ARRAY(Text))),
        ]
        stmt = (
            select(history.c.name, named.c.value).select_from(history.join(named, literal(True))).where(*cond)
        )
        return {(row[0], row[1]) for row in await self.conn.execute(stmt.distinct())}

    async def snapshot_links_of(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int],
        relation: str,
        *,
        from_keys: list[str] | None = None,
        to_keys: list[str] | None = None,
    ) -> list[HistoryRow]:
        """The live Links of a Relation from or to some Records, as of a position on a history."""
        from_key = func.split_part(history.c.key, "->", 1)
        to_key = func.substr(history.c.key, func.length(from_key) + 3)
        cond = [
            history.c.domain_id == domain_id,
            history.c.entity == "link",
            history.c.name == relation,
            chain.clause(history, upto),
        ]
        if from_keys is not None:
            cond.append(from_key == any_(literal(list(from_keys), ARRAY(Text))))
        if to_keys is not None:
            cond.append(to_key == any_(literal(list(to_keys), ARRAY(Text))))
        latest = (
            select(*history_columns())
            .where(*cond)
            .ext(distinct_on(history.c.key))
            .order_by(history.c.key, history.c.generation.desc(), history.c.seq.desc())
            .subquery()
        )
        rows = await self.conn.execute(
            select(latest).where(latest.c.change != "deleted").order_by(latest.c.key)
        )
        return [history_row(row) for row in rows]

    async def snapshot_keys_with_value(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int],
        kind: str,
        attribute: str,
        values: list[Any],
    ) -> dict[Any, list[str]]:
        """For a unique check on a snapshot: the keys of Records holding each value as of a position."""
        if not values:
            return {}
        ever = (
            select(history.c.key)
            .where(
                history.c.domain_id == domain_id,
                history.c.entity == "record",
                history.c.name == kind,
                chain.clause(history, upto),
                history_after()[attribute].astext == any_(literal([str(v) for v in values], ARRAY(Text))),
            )
            .distinct()
        )
        keys = [row.key for row in await self.conn.execute(ever)]
        found: dict[Any, list[str]] = {}
        wanted = set(values)
        for row in await self.snapshot_entities(domain_id, chain, upto, "record", kind, keys):
            value = (row.after or {}).get(attribute)
            if value in wanted:
                found.setdefault(value, []).append(row.key)
        return found


__all__ = ["SnapshotsTxn", "snapshot_of"]
