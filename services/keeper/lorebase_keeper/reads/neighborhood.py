"""POST /neighborhood (the graph around some Records) and POST /traverse (a path of Relations)."""

from __future__ import annotations

from typing import Any

from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.graph import Caps, Ref, Walk, load_records, parse_ref, steps_for, walk
from lorebase_keeper.reads.records import title_of
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

NEIGHBORHOOD_MEMBERS = {"refs", "depth", "relations", "values", "branch", "at"}
TRAVERSE_MEMBERS = {"from", "path", "values", "branch", "at"}


def _check_members(body: dict[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise Problem(
            422,
            "validation-failed",
            f"unknown member(s) {', '.join(unknown)}; {what} takes {', '.join(sorted(allowed))}",
            issues=[
                {"path": u, "rule": "unknown_member", "message": f"not a member of {what}"} for u in unknown
            ],
        )
    for member in ("branch", "at"):
        if body.get(member) is not None and not isinstance(body[member], str):
            raise Problem(422, "validation-failed", f"{member} must be a string")
    if not isinstance(body.get("values", True), bool):
        raise Problem(422, "validation-failed", "values is true or false")


async def _seeds(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, raw: Any, member: str
) -> list[Ref]:
    if not isinstance(raw, list) or not raw:
        raise Problem(
            422, "validation-failed", f"{member} is a non-empty list of Record references (Kind/key)"
        )
    refs = [parse_ref(value, f"{member}[{i}]") for i, value in enumerate(raw)]
    for kind, _ in refs:
        readable_kind(access, domain, point.branch.name, kind)
    found = await load_records(txn, domain, point, refs)
    for kind, key in refs:
        if (kind, key) not in found:
            raise Problem(404, "not-found", f"no {kind} with key {key!r} on branch {point.branch.name!r}")
    return refs


def _document(
    access: Access,
    domain: Domain,
    point: ReadPoint,
    refs: list[Ref],
    depth_of: dict[Ref, int],
    values: dict[Ref, dict[str, Any]],
    result: Walk,
    with_values: bool,
) -> dict[str, Any]:
    branch = point.branch.name
    view = readable(access, domain, branch)
    records = []
    for ref in sorted(refs, key=lambda r: (depth_of.get(r, 0), r)):
        kind = domain.schema.kinds[ref[0]]
        shown, _ = view.values(kind.name, values.get(ref, {}))
        entry: dict[str, Any] = {
            "ref": f"{ref[0]}/{ref[1]}",
            "kind": ref[0],
            "key": ref[1],
            "title": title_of(kind, shown),
        }
        if ref in depth_of:
            entry["depth"] = depth_of[ref]
        if with_values:
            entry["values"] = shown
        records.append(entry)
    links = []
    for (relation_name, from_key, to_key), row in sorted(result.links.items()):
        relation = domain.schema.relations[relation_name]
        entry = {
            "relation": relation_name,
            "from": f"{relation.from_kind}/{from_key}",
            "to": f"{relation.to_kind}/{to_key}",
        }
        if with_values:
            entry["values"] = view.link_values(relation_name, row.values)
        entry["revision"] = row.revision
        links.append(entry)
    return {
        "domain": domain.name,
        "branch": branch,
        "revision": point.revision,
        "records": records,
        "links": links,
        "capped": result.capped,
    }


async def neighborhood(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    _check_members(body, NEIGHBORHOOD_MEMBERS, "a neighborhood")
    depth = body.get("depth", domain.settings.get("agents.context.default_depth", 1))
    max_depth = int(domain.settings.get("read.traverse.max_depth", 5))
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise Problem(
            422,
            "validation-failed",
            "depth is a whole number from 0",
            issues=[{"path": "depth", "rule": "type", "message": "depth >= 0"}],
        )
    relations = body.get("relations")
    if relations is not None and not (
        isinstance(relations, list) and all(isinstance(r, str) for r in relations)
    ):
        raise Problem(422, "validation-failed", "relations is a list of Relation names (forward or inverse)")

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, body.get("branch"), body.get("at"))
        access.require("data.read", point.branch.name)
        seeds = await _seeds(txn, access, domain, point, body.get("refs"), "refs")
        steps = steps_for(access, domain, point.branch.name, relations)
        result = await walk(
            txn, domain, point, seeds, depth=min(depth, max_depth), steps=steps, caps=Caps.of(domain)
        )
        result.capped |= depth > max_depth
        refs = list(result.depth_of)
        values = await load_records(txn, domain, point, refs)
        return _document(
            access, domain, point, refs, result.depth_of, values, result, body.get("values", True)
        )

    return await rt.db.read("neighborhood", read)


async def traverse(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    _check_members(body, TRAVERSE_MEMBERS, "a traversal")
    path = body.get("path")
    if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
        raise Problem(
            422, "validation-failed", "path is a non-empty list of Relation names (forward or inverse)"
        )

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, body.get("branch"), body.get("at"))
        access.require("data.read", point.branch.name)
        frontier = await _seeds(txn, access, domain, point, body.get("from"), "from")
        steps = steps_for(access, domain, point.branch.name, path, path="path")
        caps = Caps.of(domain)
        total = Walk()
        counts = []
        for index, step in enumerate(steps):
            stand = {kind for kind, _ in frontier}
            if stand != {step.anchor}:
                raise Problem(
                    422,
                    "validation-failed",
                    f"path[{index}] {path[index]!r} starts at {step.anchor}, but the walk stands on {', '.join(sorted(stand)) or 'nothing'}",
                    issues=[
                        {
                            "path": f"path[{index}]",
                            "rule": "path.ends",
                            "message": "the Relation does not start where the path stands",
                        }
                    ],
                )
            result = await walk(txn, domain, point, frontier, depth=1, steps=[step], caps=caps)
            total.links.update(result.links)
            total.capped |= result.capped
            frontier = [ref for ref, depth in result.depth_of.items() if depth == 1]
            counts.append({"relation": path[index], "records": len(frontier)})
            if not frontier:
                break
        values = await load_records(txn, domain, point, frontier)
        doc = _document(access, domain, point, frontier, {}, values, total, body.get("values", True))
        doc["path"] = counts
        return doc

    return await rt.db.read("traverse", read)


__all__ = ["neighborhood", "traverse"]
