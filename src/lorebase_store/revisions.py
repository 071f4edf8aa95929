"""Revisions and the branch history (one row per changed Record or Link per Revision).

A branch's first-parent history is its own Revisions plus, for a branch forked from another, the
history of that branch up to the fork point (`BranchChain`). Snapshots at an earlier Revision are
rebuilt from the history rows along that chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Text, and_, any_, func, literal, or_, select, tuple_
from sqlalchemy.dialects.postgresql import ARRAY, distinct_on

from lorebase_store.stored_form import ALL, expand, history_after, history_columns
from lorebase_store.tables import history, revisions
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class RevisionRow:
    id: str
    branch: str
    generation: int
    parents: list[str]
    author: str
    message: str
    origin: dict[str, Any]
    stats: dict[str, Any]
    created_at: datetime
    # The schema version it was committed under (schema_versions); None: the creation schema.
    schema_digest: str | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One change of a Record (entity 'record', name = Kind) or Link (entity 'link', name = Relation)."""

    entity: str
    name: str
    key: str
    change: str
    attributes: list[str]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    provenance: dict[str, Any]  # whole, whatever its stored form (stored_form.py)
    revision: str = ""
    generation: int = 0
    branch: str = ""
    seq: int = 0

    def __post_init__(self) -> None:
        if ALL in self.provenance:
            object.__setattr__(self, "provenance", expand(self.after, self.provenance))


# The provenance note of a history row that moved a Record or Link to a renamed Kind or Relation:
# the name it had before (lorebase_keeper.schema_changes.migrate).
RENAMED_FROM = "$renamed_from"
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


@dataclass(frozen=True)
class BranchChain:
    """A first-parent history as segments (branch, first generation, last generation or None for
    the branch's open end), newest first. Generations only grow along a history, so a position on it
    is its generation, and "up to a Revision" is "generation at most the Revision's"."""

    segments: tuple[tuple[str, int, int | None], ...] = field(default_factory=tuple)

    def clause(self, table: Any, upto: tuple[str, int] | None = None) -> Any:
        """SQL condition selecting the rows of `table` on this history (up to a Revision's position)."""
        parts = []
        for branch, low, high in self.segments:
            if upto is not None:
                high = upto[1] if high is None else min(high, upto[1])
            if high is not None and high < low:
                continue
            cond = table.c.branch == branch
            if low > 0:
                cond = and_(cond, table.c.generation >= low)
            if high is not None:
                cond = and_(cond, table.c.generation <= high)
            parts.append(cond)
        return or_(*parts) if parts else table.c.branch.is_(None)

    def holds(self, branch: str, generation: int) -> bool:
        """Whether the Revision at (branch, generation) is on this history."""
        return any(
            name == branch and low <= generation and (high is None or generation <= high)
            for name, low, high in self.segments
        )

    def upto(self, generation: int) -> BranchChain:
        """This history cut at a generation (the chain of a branch forked there)."""
        kept = []
        for name, low, high in self.segments:
            if low > generation:
                continue
            kept.append((name, low, generation if high is None else min(high, generation)))
        return BranchChain(tuple(kept))

    def document(self) -> list[list[Any]]:
        return [list(segment) for segment in self.segments]

    @classmethod
    def from_document(cls, doc: list[list[Any]]) -> BranchChain:
        return cls(tuple((str(b), int(lo), None if hi is None else int(hi)) for b, lo, hi in doc))


def _revision(row: Any) -> RevisionRow:
    return RevisionRow(
        row.id,
        row.branch,
        row.generation,
        row.parents,
        row.author,
        row.message,
        row.origin,
        row.stats,
        row.created_at,
        row.schema_digest,
    )


def _history(row: Any) -> HistoryRow:
    return HistoryRow(
        entity=row.entity,
        name=row.name,
        key=row.key,
        change=row.change,
        attributes=row.attributes,
        before=row.before,
        after=row.after,
        provenance=row.provenance,
        revision=row.revision,
        generation=row.generation,
        branch=row.branch,
        seq=row.seq,
    )


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


_GET_REVISIONS = """
SELECT id, branch, generation, parents, author, message, origin, stats, created_at, schema_digest
  FROM revisions WHERE domain_id = $1 AND id = ANY(CAST($2 AS text[]))
"""


class RevisionsTxn(TxnBase):
    async def get_revision(self, domain_id: int, revision_id: str) -> RevisionRow | None:
        row = (
            await self.conn.execute(
                select(revisions).where(revisions.c.domain_id == domain_id, revisions.c.id == revision_id)
            )
        ).first()
        return None if row is None else _revision(row)

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
        return [_revision(row) for row in rows]

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
        return [_revision(row) for row in rows]

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
        return [_revision(row) for row in rows]

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
        return [_history(row) for row in rows]

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
        return None if row is None else _history(row)

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
        return [_history(row) for row in rows]

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
        return [_history(row) for row in rows]

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
        return [_history(row) for row in await self.conn.execute(stmt)]

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
        return [_history(row) for row in rows]

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


__all__ = ["BranchChain", "HistoryRow", "RevisionRow", "RevisionsTxn"]
