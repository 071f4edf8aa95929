"""The history of one Record or Link on a first-parent history: its changes newest first, how many,
the change that created it, the names it had before its Kind or Relation was renamed, and the newest
changes of several Records (what a context pack's `since` shows).

Each read is an index range per branch segment of the history (`BranchChain.clause`): its cost
follows the entity's changes, not the branch's length.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Text, and_, func, literal, or_, select, tuple_
from sqlalchemy.dialects.postgresql import ARRAY

from lorebase_store.branch_history import RENAMED_FROM, BranchChain, HistoryRow, history_row
from lorebase_store.stored_form import history_columns
from lorebase_store.tables import history
from lorebase_store.txn import TxnBase

_RENAMES_MAX = 20


def _named(name: str, former: tuple[tuple[str, tuple[int, int]], ...]) -> Any:
    """Rows under `name`, or under a former name before the Revision (generation) that renamed it
    (which deleted the row under the old name: that change is the rename's own)."""
    if not former:
        return history.c.name == name
    return or_(
        history.c.name == name,
        *(and_(history.c.name == old, history.c.generation < position[0]) for old, position in former),
    )


class EntityHistoryTxn(TxnBase):
    async def entity_history(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int] | None,
        entity: str,
        name: str,
        key: str,
        *,
        limit: int,
        before: tuple[int, int] | None = None,
        former: tuple[tuple[str, tuple[int, int]], ...] = (),
    ) -> list[HistoryRow]:
        """The changes of one Record or Link on a first-parent history, newest first (an index range
        per branch segment: the cost follows the entity's changes, not the branch's length). With
        `former` (entity_names), also its changes under the names it had before each rename."""
        cond = [
            history.c.domain_id == domain_id,
            history.c.entity == entity,
            _named(name, former),
            history.c.key == key,
            chain.clause(history, upto),
        ]
        if before is not None:
            cond.append(tuple_(history.c.generation, history.c.seq) < tuple_(*before))
        rows = await self.conn.execute(
            select(*history_columns())
            .where(*cond)
            .order_by(history.c.generation.desc(), history.c.seq.desc())
            .limit(limit)
        )
        return [history_row(row) for row in rows]

    async def entity_names(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int] | None,
        entity: str,
        name: str,
        key: str,
    ) -> tuple[tuple[str, tuple[int, int]], ...]:
        """The names a Record or Link had before a rename of its Kind or Relation (a schema change
        set moved it: its history row says `$renamed_from`), newest first, each with the position of
        the rename: its changes under that name are the ones before it."""
        out: list[tuple[str, tuple[int, int]]] = []
        current, bound = name, None
        for _ in range(_RENAMES_MAX):
            cond = [
                history.c.domain_id == domain_id,
                history.c.entity == entity,
                history.c.name == current,
                history.c.key == key,
                history.c.provenance.has_key(RENAMED_FROM),
                chain.clause(history, upto),
            ]
            if bound is not None:
                cond.append(history.c.generation < bound[0])
            row = (
                await self.conn.execute(
                    select(history.c.provenance[RENAMED_FROM].astext, history.c.generation, history.c.seq)
                    .where(*cond)
                    .order_by(history.c.generation.desc(), history.c.seq.desc())
                    .limit(1)
                )
            ).first()
            if row is None or not row[0]:
                break
            current, bound = str(row[0]), (int(row[1]), int(row[2]))
            out.append((current, bound))
        return tuple(out)

    async def entity_created(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int] | None,
        entity: str,
        name: str,
        key: str,
    ) -> HistoryRow | None:
        """The change that created the entity (its latest creation, after a delete and a re-create)."""
        row = (
            await self.conn.execute(
                select(*history_columns())
                .where(
                    history.c.domain_id == domain_id,
                    history.c.entity == entity,
                    history.c.name == name,
                    history.c.key == key,
                    history.c.change == "created",
                    chain.clause(history, upto),
                )
                .order_by(history.c.generation.desc(), history.c.seq.desc())
                .limit(1)
            )
        ).first()
        return None if row is None else history_row(row)

    async def recent_changes_of(
        self,
        domain_id: int,
        chain: BranchChain,
        refs: list[tuple[str, str]],
        *,
        after: tuple[str, int] | None,
        limit: int,
    ) -> list[HistoryRow]:
        """The newest changes of these Records on a history (after a position when given): the latest
        few of each Record by its index range, then the newest of those."""
        if not refs:
            return []
        wanted = select(
            func.unnest(literal([k for k, _ in refs], ARRAY(Text))).label("name"),
            func.unnest(literal([key for _, key in refs], ARRAY(Text))).label("key"),
        ).subquery("wanted")
        cond = [
            history.c.domain_id == domain_id,
            history.c.entity == "record",
            history.c.name == wanted.c.name,
            history.c.key == wanted.c.key,
            chain.clause(history, None),
        ]
        if after is not None:
            cond.append(~chain.clause(history, after))
        latest = (
            select(*history_columns())
            .where(*cond)
            .order_by(history.c.generation.desc(), history.c.seq.desc())
            .limit(limit)
            .lateral("latest")
        )
        rows = await self.conn.execute(
            select(latest)
            .select_from(wanted.join(latest, literal(True)))
            .order_by(latest.c.generation.desc(), latest.c.seq.desc())
            .limit(limit)
        )
        return [history_row(row) for row in rows]

    async def last_change(
        self, domain_id: int, chain: BranchChain, upto: tuple[str, int] | None, entity: str, name: str
    ) -> str | None:
        """The latest Revision that changed any Record of a Kind (or Link of a Relation)."""
        return await self.conn.scalar(
            select(history.c.revision)
            .where(
                history.c.domain_id == domain_id,
                history.c.entity == entity,
                history.c.name == name,
                chain.clause(history, upto),
            )
            .order_by(history.c.generation.desc(), history.c.seq.desc())
            .limit(1)
        )

    async def count_entity_history(
        self,
        domain_id: int,
        chain: BranchChain,
        upto: tuple[str, int] | None,
        entity: str,
        name: str,
        key: str,
        *,
        cap: int,
        former: tuple[tuple[str, tuple[int, int]], ...] = (),
    ) -> int:
        """How many changes the entity has on the history, counting at most cap + 1."""
        inner = (
            select(history.c.seq)
            .where(
                history.c.domain_id == domain_id,
                history.c.entity == entity,
                _named(name, former),
                history.c.key == key,
                chain.clause(history, upto),
            )
            .limit(cap + 1)
            .subquery()
        )
        return int(await self.conn.scalar(select(func.count()).select_from(inner)) or 0)


__all__ = ["EntityHistoryTxn"]
