"""The query DSL compiled to SQL over the materialised head (or a snapshot rebuilt from history).

The keeper validates a filter against the schema first; what arrives here is a normalised tree:
`{"and": [...]}`, `{"or": [...]}`, `{"not": node}` or a predicate
`{"attr", "op", "value", "numeric"}` whose values are canonical.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Numeric, and_, cast, func, literal, not_, or_, select, true
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.sql import ColumnElement

from lorebase_store.revisions import BranchChain
from lorebase_store.stored_form import history_after
from lorebase_store.tables import history, records
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class OrderBy:
    attr: str
    descending: bool
    numeric: bool


@dataclass(frozen=True)
class QuerySpec:
    domain_id: int
    branch: str
    kinds: tuple[str, ...]
    where: dict[str, Any] | None
    order_by: tuple[OrderBy, ...]
    limit: int
    offset: int
    # Set for a read as of an earlier Revision: (chain, (branch, generation)).
    snapshot: tuple[BranchChain, tuple[str, int]] | None = None


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _predicate(values: Any, node: dict[str, Any]) -> ColumnElement[bool]:
    if "and" in node:
        return and_(true(), *[_predicate(values, child) for child in node["and"]])
    if "or" in node:
        return or_(*[_predicate(values, child) for child in node["or"]])
    if "not" in node:
        return not_(_predicate(values, node["not"]))
    attr, op, value, numeric = node["attr"], node["op"], node.get("value"), node.get("numeric", False)
    text = values[attr].astext
    if op == "is_null":
        present = values.has_key(attr)
        return not_(present) if value else present
    if numeric and op in ("eq", "ne", "in"):
        # Numbers compare by value: "24.01" equals a filter value of 24.010.
        # has_key first: a missing value is "not equal" (as for other types), never NULL.
        number = cast(text, Numeric)
        present = values.has_key(attr)
        if op == "in":
            if not value:
                return literal(False)
            return and_(present, number.in_([cast(literal(str(v)), Numeric) for v in value]))
        right_number = cast(literal(str(value)), Numeric)
        return and_(present, number == right_number) if op == "eq" else and_(present, number != right_number)
    if op == "eq":
        return values.contains({attr: value})
    if op == "ne":
        return and_(values.has_key(attr), not_(values.contains({attr: value})))
    if op == "in":
        if not value:
            return literal(False)
        if isinstance(value[0], bool):
            return or_(*[values.contains({attr: v}) for v in value])
        return text.in_([str(v) for v in value])
    if op in ("lt", "le", "gt", "ge"):
        left: Any = cast(text, Numeric) if numeric else text.collate("C")
        right: Any = cast(literal(str(value)), Numeric) if numeric else literal(str(value))
        return {"lt": left < right, "le": left <= right, "gt": left > right, "ge": left >= right}[op]
    if op == "contains":
        return text.ilike("%" + _escape_like(str(value)) + "%", escape="\\")
    if op == "prefix":
        return text.like(_escape_like(str(value)) + "%", escape="\\")
    raise ValueError(f"unknown operator {op!r}")


def record_rows(spec: QuerySpec) -> Any:
    """A selectable with columns kind, key, values for the head or a snapshot (spec.snapshot)."""
    if spec.snapshot is None:
        return (
            select(records.c.kind, records.c.key, records.c["values"].label("values"))
            .where(
                records.c.domain_id == spec.domain_id,
                records.c.branch == spec.branch,
                records.c.kind.in_(spec.kinds),
            )
            .subquery("r")
        )
    chain, upto = spec.snapshot
    kept = (
        select(history)
        .where(
            history.c.domain_id == spec.domain_id,
            history.c.entity == "record",
            history.c.name.in_(spec.kinds),
            chain.clause(history, upto),
        )
        .ext(distinct_on(history.c.name, history.c.key))
        .order_by(history.c.name, history.c.key, history.c.generation.desc(), history.c.seq.desc())
        .subquery("kept")
    )
    latest = select(
        kept.c.name.label("kind"), kept.c.key, history_after(kept).label("values"), kept.c.change
    ).subquery("h")
    return (
        select(latest.c.kind, latest.c.key, latest.c["values"])
        .where(latest.c.change != "deleted")
        .subquery("r")
    )


class QueryTxn(TxnBase):
    async def query_records(
        self, spec: QuerySpec
    ) -> tuple[list[tuple[str, str, dict[str, Any]]], int | None]:
        """Matching (kind, key, values), one more than `limit` to tell whether a page follows."""
        src = record_rows(spec)
        values = src.c["values"]
        stmt = select(src.c.kind, src.c.key, values)
        if spec.where:
            stmt = stmt.where(_predicate(values, spec.where))
        order: list[Any] = []
        for item in spec.order_by:
            col: Any = (
                cast(values[item.attr].astext, Numeric)
                if item.numeric
                else values[item.attr].astext.collate("C")
            )
            order.append(col.desc().nulls_last() if item.descending else col.asc().nulls_last())
        order += [src.c.kind, src.c.key.collate("C")]
        stmt = stmt.order_by(*order).offset(spec.offset).limit(spec.limit + 1)
        rows = [(r.kind, r.key, r.values) for r in await self.conn.execute(stmt)]
        return rows, None

    async def count_records_matching(self, spec: QuerySpec) -> int:
        src = record_rows(spec)
        stmt = select(func.count()).select_from(src)
        if spec.where:
            stmt = stmt.where(_predicate(src.c["values"], spec.where))
        return int(await self.conn.scalar(stmt) or 0)

    async def group_counts(self, spec: QuerySpec, group_by: str) -> list[tuple[Any, int]]:
        src = record_rows(spec)
        values = src.c["values"]
        value = values[group_by]
        stmt = select(value.label("value"), func.count().label("n")).select_from(src)
        if spec.where:
            stmt = stmt.where(_predicate(values, spec.where))
        stmt = stmt.group_by(value).order_by(func.count().desc(), value.asc().nulls_last())
        return [(row.value, int(row.n)) for row in await self.conn.execute(stmt)]


__all__ = ["OrderBy", "QuerySpec", "QueryTxn", "record_rows"]
