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
QUERY_MEMBERS = {
    "kind",
    "trait",
    "where",
    "select",
    "order_by",
    "limit",
    "cursor",
    "aggregate",
    "branch",
    "at",
    "coverage",
}
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


def _offset(cursor: Any) -> int:
    value = decode_cursor(
        str(cursor),
        lambda v: isinstance(v, dict) and isinstance(v.get("o"), int) and 0 <= v["o"] <= MAX_OFFSET,
    )
    return int(value["o"])


async def run_query(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    check_query_members(body)
    return await rt.db.read("query", query_in, access, domain, body)


def check_query_members(body: dict[str, Any], path: str = "") -> None:
    unknown = sorted(set(body) - QUERY_MEMBERS)
    if unknown:
        raise Problem(
            422,
            "validation-failed",
            f"unknown member(s) {', '.join(unknown)}; a query takes {', '.join(sorted(QUERY_MEMBERS))}",
            issues=[
                {"path": f"{path}{u}", "rule": "unknown_member", "message": "not a member of a query"}
                for u in unknown
            ],
        )
    for member, kind in (("branch", str), ("at", str), ("kind", str), ("trait", str)):
        if body.get(member) is not None and not isinstance(body[member], kind):
            raise Problem(422, "validation-failed", f"{member} must be a string")
    if body.get("coverage") is not None and not isinstance(body["coverage"], bool):
        raise Problem(
            422,
            "validation-failed",
            "coverage is true or false",
            issues=[{"path": f"{path}coverage", "rule": "type", "message": "true or false"}],
        )


async def query_in(txn: Txn, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    """Run a checked query inside the caller's transaction (context packs seed from queries)."""
    point = await read_point(txn, domain, body.get("branch"), body.get("at"))
    branch = point.branch.name
    access.require("data.read", branch)
    view = readable(access, domain, branch)
    kinds, attributes = _target(view, body)
    checker = _Checker(attributes)
    where = checker.node(body["where"], "where") if body.get("where") is not None else None
    select = body.get("select")
    if select is not None:
        if not isinstance(select, list) or not all(isinstance(s, str) for s in select):
            checker.problem("select", "query.select", "select is a list of Attribute names")
            select = None
        else:
            for i, name in enumerate(select):
                checker.attribute(name, f"select[{i}]")
    order: list[OrderBy] = []
    order_by = body.get("order_by") or []
    if not isinstance(order_by, list):
        order_by = [order_by]
    for i, item in enumerate(order_by):
        name = item if isinstance(item, str) else None
        descending = bool(name and name.startswith("-"))
        attr = checker.attribute(name.lstrip("-") if name else item, f"order_by[{i}]")
        if attr is not None:
            order.append(OrderBy(attr.name, descending, attr.type in NUMERIC))
    aggregate = body.get("aggregate")
    group_by = None
    if aggregate is not None:
        if not isinstance(aggregate, dict) or set(aggregate) - {"count", "group_by"}:
            checker.problem(
                "aggregate", "query.aggregate", 'aggregate is {"count": true} or {"group_by": attr}'
            )
        elif aggregate.get("group_by") is not None:
            attr = checker.attribute(aggregate["group_by"], "aggregate.group_by")
            group_by = attr.name if attr else None
    max_limit = int(domain.settings.get("read.query.max_limit", 1000))
    limit = body.get("limit", domain.settings.get("read.query.default_limit", 100))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        checker.problem(
            "limit",
            "query.limit",
            f"limit is a whole number from 1 to {max_limit} (read.query.max_limit)",
        )
    if checker.issues:
        raise invalid(checker.issues)
    offset = _offset(body["cursor"]) if body.get("cursor") else 0
    spec = QuerySpec(domain.id, branch, tuple(kinds), where, tuple(order), int(limit), offset, point.snapshot)
    doc: dict[str, Any] = {"domain": domain.name, "branch": branch, "revision": point.revision}
    doc["kind" if body.get("kind") else "trait"] = body.get("kind") or body.get("trait")
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
        await _add_coverage(txn, access, domain, point, kinds, body, where, select, group_by, doc)
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
    await _add_coverage(txn, access, domain, point, kinds, body, where, select, None, doc)
    return doc


async def _add_coverage(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    kinds: list[str],
    body: dict[str, Any],
    where: dict[str, Any] | None,
    select: list[str] | None,
    group_by: str | None,
    doc: dict[str, Any],
) -> None:
    if body.get("coverage") is False:
        return
    used = {
        "where": set(attributes_in(where)),
        "select": set(select or []),
        "group_by": {group_by} if group_by else set(),
    }
    doc["coverage"] = await coverage(txn, access, domain, point, kinds, used)


def _target(view: Readable, body: dict[str, Any]) -> tuple[list[str], dict[str, Attribute]]:
    """The Kinds a query reads and the Attributes it may use on them."""
    kind_name, trait_name = body.get("kind"), body.get("trait")
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


__all__ = ["check_query_members", "query_in", "run_query"]
