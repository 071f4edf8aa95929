"""POST /query: the filter DSL checked against the schema, then run over the head or a snapshot.

A query names a `kind` or a `trait` (the readable Kinds implementing it); `where` is a tree of
`and` / `or` / `not` and predicates `{"attr", "op", "value"}` with op one of eq, ne, lt, le, gt,
ge, in, contains, prefix, is_null; `select` names Attributes; `order_by` is a list of Attribute
names, `-name` for descending; `limit` (read.query.max_limit) and `cursor` page;
`aggregate: {"count": true, "group_by": attr}` counts. docs/query.md has the full reference.
"""

from __future__ import annotations

from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.contract.reads import QueryBody
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.problems import Problem, invalid
from lorebase.schema import Attribute
from lorebase_keeper.access import Access, Readable, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.coverage import attributes_in, coverage
from lorebase_keeper.reads.records import title_of
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import OrderBy, QuerySpec, Txn

OPS = {"eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "prefix", "is_null"}
NUMERIC = {"integer", "decimal"}
MAX_OFFSET = 1_000_000_000  # a query cursor past it was not handed out by this API
TEXTUAL = {"string", "text", "enum"}


class _Checker:
    """Checks the members of a query against the Attributes the caller may filter, order and group
    on: those it may name and read (any other answers like an unknown one)."""

    def __init__(self, attributes: dict[str, Attribute]) -> None:
        self.attributes = attributes
        self.issues: list[dict[str, Any]] = []

    def problem(self, path: str, rule: str, message: str) -> None:
        self.issues.append({"path": path, "rule": rule, "message": message})

    def attribute(self, name: Any, path: str) -> Attribute | None:
        attr = self.attributes.get(name) if isinstance(name, str) else None
        if attr is None:
            self.problem(
                path, "query.attribute", f"unknown Attribute {name!r}; one of {', '.join(self.attributes)}"
            )
            return None
        return attr

    def comparable(self, attr: Attribute, path: str) -> bool:
        """A vault Attribute's values are stored as refs (docs/erasure.md): only is_null filters on
        it; comparing, ordering or grouping would answer about refs, so it is refused."""
        if attr.vault:
            self.problem(
                path,
                "query.vault",
                f"{attr.name} is a vault Attribute: its values cannot be compared, ordered or grouped "
                "on (is_null works); read the Records to see them",
            )
        return not attr.vault

    def node(self, node: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(node, dict):
            self.problem(
                path, "query.where", "a filter is an object: {and|or: [...]}, {not: ...} or {attr, op, value}"
            )
            return None
        for combinator in ("and", "or"):
            if combinator in node:
                children = node[combinator]
                if set(node) != {combinator} or not isinstance(children, list) or not children:
                    self.problem(
                        path,
                        "query.where",
                        f"{combinator} takes a non-empty list of filters and nothing else",
                    )
                    return None
                checked = [self.node(child, f"{path}.{combinator}[{i}]") for i, child in enumerate(children)]
                return None if any(c is None for c in checked) else {combinator: checked}
        if "not" in node:
            if set(node) != {"not"}:
                self.problem(path, "query.where", "not takes one filter and nothing else")
                return None
            inner = self.node(node["not"], f"{path}.not")
            return None if inner is None else {"not": inner}
        extra = set(node) - {"attr", "op", "value"}
        if extra:
            self.problem(path, "query.where", f"unknown member(s) {', '.join(sorted(extra))} in a predicate")
            return None
        attr = self.attribute(node.get("attr"), f"{path}.attr")
        op = node.get("op")
        if not isinstance(op, str) or op not in OPS:
            self.problem(
                f"{path}.op", "query.op", f"unknown operator {op!r}; one of {', '.join(sorted(OPS))}"
            )
            return None
        if attr is None:
            return None
        value = node.get("value")
        if op == "is_null":
            if value is None:
                value = True
            if not isinstance(value, bool):
                self.problem(f"{path}.value", "query.value", "is_null takes true or false")
                return None
            return {"attr": attr.name, "op": op, "value": value}
        if not self.comparable(attr, path):
            return None
        if op in ("contains", "prefix"):
            if attr.type not in TEXTUAL or not isinstance(value, str):
                self.problem(f"{path}.op", "query.op", f"{op} works on text Attributes with a string value")
                return None
            return {"attr": attr.name, "op": op, "value": value}
        if op in ("lt", "le", "gt", "ge") and attr.type == "boolean":
            self.problem(f"{path}.op", "query.op", f"{op} does not compare booleans; use eq")
            return None
        if op == "in":
            if not isinstance(value, list) or not value:
                self.problem(f"{path}.value", "query.value", "in takes a non-empty list of values")
                return None
            canonical = [self.value(attr, v, f"{path}.value[{i}]") for i, v in enumerate(value)]
            if any(c is _BAD for c in canonical):
                return None
            return {"attr": attr.name, "op": op, "value": canonical, "numeric": attr.type in NUMERIC}
        canonical_one = self.value(attr, value, f"{path}.value")
        if canonical_one is _BAD:
            return None
        return {"attr": attr.name, "op": op, "value": canonical_one, "numeric": attr.type in NUMERIC}

    def value(self, attr: Attribute, value: Any, path: str) -> Any:
        loose = Attribute(
            name=attr.name, type=attr.type, precision=attr.precision, scale=attr.scale, values=attr.values
        )
        if attr.type == "decimal":
            # A filter value may carry more digits than the Attribute stores.
            loose = Attribute(name=attr.name, type="decimal", precision=38, scale=min(18, 38))
        try:
            result = canonical_value(loose, value)
        except ValueProblem as exc:
            self.problem(path, exc.rule, exc.message)
            return _BAD
        if result is None:
            self.problem(path, "query.value", "a value is required; use is_null to look for missing values")
            return _BAD
        return result


_BAD = object()


def _cursor(offset: int) -> str:
    return encode_cursor({"o": offset})


def _offset(cursor: str) -> int:
    value = decode_cursor(
        cursor,
        lambda v: isinstance(v, dict) and isinstance(v.get("o"), int) and 0 <= v["o"] <= MAX_OFFSET,
    )
    return int(value["o"])


async def run_query(rt: Runtime, access: Access, domain: Domain, query: QueryBody) -> dict[str, Any]:
    """POST /query: the Records matching a query, or their counts, with coverage."""
    return await rt.db.read("query", query_in, access, domain, query)


async def query_in(txn: Txn, access: Access, domain: Domain, query: QueryBody) -> dict[str, Any]:
    """Run a query inside the caller's transaction (context packs seed from queries): its filter,
    Attributes and limit checked against the schema and the settings first, every issue at once."""
    point = await read_point(txn, domain, query.branch, query.at)
    branch = point.branch.name
    view = readable(access, domain, branch)
    kinds, attributes = _target(view, query)
    checker = _Checker(attributes)
    where = checker.node(query.where, "where") if query.where is not None else None
    select = query.select
    for i, name in enumerate(select or ()):
        checker.attribute(name, f"select[{i}]")
    order: list[OrderBy] = []
    order_by = [query.order_by] if isinstance(query.order_by, str) else query.order_by or []
    for i, name in enumerate(order_by):
        attr = checker.attribute(name.lstrip("-"), f"order_by[{i}]")
        if attr is not None and checker.comparable(attr, f"order_by[{i}]"):
            order.append(OrderBy(attr.name, name.startswith("-"), attr.type in NUMERIC))
    aggregate = query.aggregate
    group_by = None
    if aggregate is not None and aggregate.group_by is not None:
        attr = checker.attribute(aggregate.group_by, "aggregate.group_by")
        group_by = attr.name if attr and checker.comparable(attr, "aggregate.group_by") else None
    page = domain.settings.model.read.query
    limit = page.default_limit if query.limit is None else query.limit
    if not 1 <= limit <= page.max_limit:
        checker.problem(
            "limit",
            "query.limit",
            f"limit is a whole number from 1 to {page.max_limit} (read.query.max_limit)",
        )
    if checker.issues:
        raise invalid(checker.issues)
    offset = _offset(query.cursor) if query.cursor else 0
    spec = QuerySpec(domain.id, branch, tuple(kinds), where, tuple(order), limit, offset, point.snapshot)
    doc: dict[str, Any] = {"domain": domain.name, "branch": branch, "revision": point.revision}
    doc["kind" if query.kind else "trait"] = query.kind or query.trait
    if aggregate is not None:
        if group_by is not None:
            groups = await txn.group_counts(spec, group_by)
            doc["aggregate"] = {
                "group_by": group_by,
                "groups": [{"value": value, "count": count} for value, count in groups],
                "count": sum(count for _, count in groups),
            }
        else:
            doc["aggregate"] = {"count": await txn.count_records_matching(spec)}
        await _add_coverage(txn, access, domain, point, kinds, query, where, select, group_by, doc)
        return doc
    rows, _ = await txn.query_records(spec)
    more = len(rows) > spec.limit
    results = []
    for kind_name, key, values in rows[: spec.limit]:
        kind = domain.schema.kinds[kind_name]
        shown, _ = view.values(kind_name, values)
        title = title_of(kind, shown)
        if select is not None:
            shown = {name: shown[name] for name in select if name in shown}
        results.append(
            {
                "ref": f"{kind_name}/{key}",
                "kind": kind_name,
                "key": key,
                "title": title,
                "values": shown,
            }
        )
    doc["records"] = results
    doc["count"] = len(results)
    doc["next_cursor"] = _cursor(offset + spec.limit) if more else None
    await _add_coverage(txn, access, domain, point, kinds, query, where, select, None, doc)
    return doc


async def _add_coverage(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    kinds: list[str],
    query: QueryBody,
    where: dict[str, Any] | None,
    select: list[str] | None,
    group_by: str | None,
    doc: dict[str, Any],
) -> None:
    if not query.coverage:
        return
    used = {
        "where": set(attributes_in(where)),
        "select": set(select or []),
        "group_by": {group_by} if group_by else set(),
    }
    doc["coverage"] = await coverage(txn, access, domain, point, kinds, used)


def _target(view: Readable, query: QueryBody) -> tuple[list[str], dict[str, Attribute]]:
    """The Kinds a query reads and the Attributes it may use on them."""
    kind_name, trait_name = query.kind, query.trait
    if bool(kind_name) == bool(trait_name):
        raise Problem(
            422,
            "validation-failed",
            "name exactly one of kind or trait",
            issues=[
                {"path": "kind", "rule": "query.target", "message": "give kind or trait, not both or neither"}
            ],
        )
    if kind_name:
        if view.kind(kind_name) is None:
            raise Problem(
                404, "not-found", f"unknown Kind {kind_name!r}; GET /schema lists the Kinds you may read"
            )
        cleared = view.cleared(kind_name)
        return [kind_name], {n: a for n, a in view.attributes(kind_name).items() if n in cleared}
    trait_name = str(trait_name)
    trait = view.schema.traits.get(trait_name)
    kinds = [k for k in view.schema.kinds_implementing(trait_name) if k in view.kinds] if trait else []
    if trait is None or not kinds:
        raise Problem(
            404, "not-found", f"unknown Trait {trait_name!r}; GET /schema lists the Traits you may read"
        )
    return kinds, view.trait_attributes(trait_name, kinds)


__all__ = ["query_in", "run_query"]
