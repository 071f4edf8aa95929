"""POST /neighborhood (the graph around some Records) and POST /traverse (a path of Relations)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.reads import NeighborhoodBody, TraverseBody
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.graph import Caps, Ref, Walk, load_records, parse_ref, steps_for, walk
from lorebase_keeper.reads.records import title_of
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


async def _seeds(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, raw: list[str], member: str
) -> list[Ref]:
    """The Records a walk starts from: readable, and present on the branch (404 otherwise)."""
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


async def neighborhood(
    rt: Runtime, access: Access, domain: Domain, request: NeighborhoodBody
) -> dict[str, Any]:
    """The graph around `refs`, `depth` Relations deep (capped at read.traverse.max_depth)."""
    depth = request.depth
    if depth is None:
        depth = domain.settings.model.agents.context.default_depth
    max_depth = domain.settings.model.read.traverse.max_depth
    relations = request.relations

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch, request.at)
        seeds = await _seeds(txn, access, domain, point, request.refs, "refs")
        steps = steps_for(access, domain, point.branch.name, relations)
        result = await walk(
            txn, domain, point, seeds, depth=min(depth, max_depth), steps=steps, caps=Caps.of(domain)
        )
        result.capped |= depth > max_depth
        refs = list(result.depth_of)
        values = await load_records(txn, domain, point, refs)
        return _document(access, domain, point, refs, result.depth_of, values, result, request.values)

    return await rt.db.read("neighborhood", read)


async def traverse(rt: Runtime, access: Access, domain: Domain, request: TraverseBody) -> dict[str, Any]:
    """Follow `path`, one Relation after the other, from the Records `from`."""
    path = request.path

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch, request.at)
        frontier = await _seeds(txn, access, domain, point, request.from_, "from")
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
        doc = _document(access, domain, point, frontier, {}, values, total, request.values)
        doc["path"] = counts
        return doc

    return await rt.db.read("traverse", read)


__all__ = ["neighborhood", "traverse"]
