"""The sections of a context pack: seeds, neighbours, Links by Relation, the schema of what is in
it, recent changes of its Records and the lineage of the seeds' values.

The far neighbours (depth 2 and beyond) are assembled without their values, which come last
(`far_values`): when the budget would trim every far neighbour's values anyway (budget.trimmed_whole),
the pack needs only how many of them would have shown some, and a Record shows its key Attributes
whenever the caller may read them, so that is how many of those Records exist: an index probe per
Record instead of reading, decoding and rendering values the answer drops (at depth 2 from a
Supplier of the bench, 89 far neighbours of which the answer keeps 4, without values). A far Kind
whose title the caller may read still has its values read: the title stays after the values go.
The answer is the same bytes either way (tests/unit/test_context_budget.py, test_context.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lorebase.ids import iso_seconds
from lorebase_keeper.access import Access, Readable, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads import Ref, Step, lineage_of, load_records, read_point, title_of
from lorebase_store import Txn


@dataclass(frozen=True)
class PackRows:
    """What a pack reads of its Records once the walk is done: the seeds' and near neighbours'
    values, the seeds' provenance and last Revision, and which far neighbours exist (None when
    not probed: `far_values` then probes them itself if it needs to)."""

    values: dict[Ref, dict[str, Any]]
    stored: dict[Ref, tuple[dict[str, Any], str]]
    existing: set[Ref] | None


async def pack_rows(
    txn: Txn, access: Access, domain: Domain, point: Any, seeds: list[Ref], near: list[Ref], far: list[Ref]
) -> PackRows:
    """At a branch head, in one statement: the seeds' rows, the near neighbours' values and the
    existence probe of the far neighbours `far_values` counts when the budget drops all their
    values (probed ahead: a few index entries, against a round trip of its own afterwards). At a
    snapshot, as `load_records` reads them, the seeds' provenance from the head as before."""
    if point.at is not None:
        values = await load_records(txn, domain, point, [*seeds, *near])
        return PackRows(values, await _rows(txn, domain, point, seeds), None)
    probed = _probed(access, domain, point, far)
    read = await txn.refs_read(domain.id, point.branch.name, rows=seeds, values=near, existing=probed or [])
    values = {ref: row.values for ref, row in read.rows.items()} | read.values
    stored = {ref: (row.provenance, row.updated_revision) for ref, row in read.rows.items()}
    return PackRows(values, stored, read.existing if probed is not None else None)


async def assemble(
    access: Access,
    domain: Domain,
    point: Any,
    seeds: list[Ref],
    depth_of: dict[Ref, int],
    links: dict[tuple[str, str, str], Any],
    rows: PackRows,
    steps: list[Step],
) -> dict[str, Any]:
    """Every section but `recent_changes` and `lineage` (below: the caller may know one will be
    trimmed whole), the far neighbours without their values (`far_values`)."""
    branch = point.branch.name
    view = readable(access, domain, branch)
    values, stored = rows.values, rows.stored
    pack: dict[str, Any] = {"domain": domain.name, "branch": branch, "revision": point.revision}
    seed_entries = []
    provenance_by_seed: dict[Ref, tuple[dict[str, Any], dict[str, Any]]] = {}
    for ref in seeds:
        kind = domain.schema.kinds[ref[0]]
        shown, _ = view.values(kind.name, values.get(ref, {}))
        entry = {"ref": f"{ref[0]}/{ref[1]}", "title": title_of(kind, shown), "values": shown}
        if ref in stored:
            entry["updated_revision"] = stored[ref][1]
            provenance_by_seed[ref] = (stored[ref][0], shown)
        seed_entries.append(entry)
    pack["seeds"] = seed_entries
    neighbors = []
    for ref, depth in sorted(depth_of.items(), key=lambda item: (item[1], item[0])):
        if depth == 0 or ref in seeds:
            continue
        kind = domain.schema.kinds[ref[0]]
        shown, _ = view.values(kind.name, values.get(ref, {}))
        neighbors.append(
            {"ref": f"{ref[0]}/{ref[1]}", "title": title_of(kind, shown), "depth": depth, "values": shown}
        )
    pack["neighbors"] = neighbors
    grouped: dict[str, list[dict[str, Any]]] = {}
    for (relation_name, from_key, to_key), row in sorted(links.items()):
        relation = domain.schema.relations[relation_name]
        entry = {"from": f"{relation.from_kind}/{from_key}", "to": f"{relation.to_kind}/{to_key}"}
        shown_link = view.link_values(relation_name, row.values)
        if shown_link:
            entry["values"] = shown_link
        grouped.setdefault(relation_name, []).append(entry)
    pack["links"] = grouped
    pack["_relation_ends"] = {
        name: f"{domain.schema.relations[name].from_kind} -> {domain.schema.relations[name].to_kind}"
        for name in grouped
    }
    pack["schema"] = _schema(domain, view, {ref[0] for ref in depth_of}, set(grouped))
    pack["lineage"] = []
    pack["_seed_provenance"] = provenance_by_seed  # for `lineage` (or its count), as the budget decides
    return pack


async def _rows(
    txn: Txn, domain: Domain, point: Any, refs: list[Ref]
) -> dict[Ref, tuple[dict[str, Any], str]]:
    rows = await txn.records_of(domain.id, point.branch.name, refs)
    return {ref: (row.provenance, row.updated_revision) for ref, row in rows.items()}


def _schema(domain: Domain, view: Readable, kinds: set[str], relations: set[str]) -> dict[str, Any]:
    doc = domain.schema.document
    return {
        "kinds": [
            {
                "name": name,
                "description": doc["kinds"][name].get("description") or "",
                "key": list(domain.schema.kinds[name].key),
                "title": domain.schema.kinds[name].title,
                "attributes": [
                    {
                        "name": a.name,
                        "type": a.type_name,
                        **({"description": a.description} if a.description else {}),
                    }
                    for a in view.attributes(name).values()
                ],
            }
            for name in domain.schema.kinds
            if name in kinds
        ],
        "relations": [
            {
                "name": name,
                "inverse": r.inverse,
                "from": r.from_kind,
                "to": r.to_kind,
                "cardinality": r.cardinality,
                "description": r.description,
            }
            for name, r in domain.schema.relations.items()
            if name in relations
        ],
    }


@dataclass(frozen=True)
class FarValues:
    """The far neighbours' values, or None when every one will be trimmed: then `count` is how many
    of them would have shown some (fit's `omitted` for `far_neighbor_values`)."""

    values: dict[Ref, dict[str, Any]] | None
    count: int = 0


def _probed(access: Access, domain: Domain, point: Any, far: list[Ref]) -> list[Ref] | None:
    """The far neighbours whose existence `far_values` counts when the budget drops every far
    value: those of Kinds whose key the caller may read. None when it would read their values
    whatever the budget (a far Kind with a title the caller may read; a snapshot)."""
    view = readable(access, domain, point.branch.name)
    kinds = {kind for kind, _ in far}
    titled = any(
        (title := domain.schema.kinds[k].title) is not None and title in view.cleared(k) for k in kinds
    )
    if titled or point.at is not None:
        return None
    keyed = {k for k in kinds if all(a in view.cleared(k) for a in domain.schema.kinds[k].key)}
    return [ref for ref in far if ref[0] in keyed]


async def far_values(
    txn: Txn,
    access: Access,
    domain: Domain,
    point: Any,
    far: list[Ref],
    existing: set[Ref] | None = None,
    *,
    whole: bool,
) -> FarValues:
    """The values of the far neighbours `far`; with `whole` (the budget trims all of them), only
    how many would show some, read as their existence where the caller may read their keys
    (`existing`: those of them found already, `pack_rows`)."""
    view = readable(access, domain, point.branch.name)
    probed = _probed(access, domain, point, far)
    if not whole or probed is None:
        return FarValues(await load_records(txn, domain, point, far))
    if existing is None:
        existing = await txn.existing_of(domain.id, point.branch.name, probed)
    count = len(existing)
    keyed = set(probed)
    others = [ref for ref in far if ref not in keyed]
    if others:
        values = await load_records(txn, domain, point, others)
        count += sum(1 for (kind, _), v in values.items() if view.values(kind, v)[0])
    return FarValues(None, count)


def show_far_values(
    pack: dict[str, Any], access: Access, domain: Domain, point: Any, values: dict[Ref, dict[str, Any]]
) -> None:
    """Put the far neighbours' values (and titles) into the pack's neighbour entries."""
    view = readable(access, domain, point.branch.name)
    for entry in pack["neighbors"]:
        if entry["depth"] > 1:
            kind_name, key = entry["ref"].split("/", 1)
            kind = domain.schema.kinds[kind_name]
            shown, _ = view.values(kind_name, values.get((kind_name, key), {}))
            entry["title"], entry["values"] = title_of(kind, shown), shown


def recent_changes_max(domain: Domain) -> int:
    return domain.settings.model.agents.context.recent_changes_max


async def recent_changes(
    txn: Txn, domain: Domain, point: Any, refs: list[Ref], since: str | None, access: Access
) -> list[dict[str, Any]]:
    """The newest changes of the pack's Records, newest first (at most recent_changes_max); with
    `since`, only those after that Revision."""
    after = None
    if since:
        after = (await read_point(txn, domain, point.branch.name, since)).at
    limit = recent_changes_max(domain)
    rows = await txn.recent_changes_of(domain.id, point.chain, refs, after=after, limit=limit)
    revisions = await txn.get_revisions(domain.id, [row.revision for row in rows])
    view = readable(access, domain, point.branch.name)
    out = []
    for row in rows:
        revision = revisions[row.revision]
        cleared = view.cleared(row.name)
        out.append(
            {
                "revision": revision.id,
                "at": iso_seconds(revision.created_at),
                "ref": f"{row.name}/{row.key}",
                "change": row.change,
                "attributes": [a for a in row.attributes if a in cleared],
                "actor": revision.author,
                "origin": revision.origin.get("type"),
                "message": revision.message,
            }
        )
    return out


def lineage_count(pack: dict[str, Any]) -> int:
    """How many entries `lineage` gives this pack's seeds, without reading their Revisions: one per
    seed and Revision behind a value it shows (a Revision a provenance names always exists)."""
    seeds: dict[Ref, tuple[dict[str, Any], dict[str, Any]]] = pack["_seed_provenance"]
    return sum(
        len({p for name in shown if isinstance(p := provenance.get(name), str)})
        for provenance, shown in seeds.values()
    )


async def lineage(txn: Txn, domain: Domain, pack: dict[str, Any]) -> list[dict[str, Any]]:
    """Per seed, its values grouped by the Revision behind them, newest first."""
    seeds: dict[Ref, tuple[dict[str, Any], dict[str, Any]]] = pack["_seed_provenance"]
    entries = []
    for (kind, key), (provenance, shown) in seeds.items():
        by_revision: dict[str, dict[str, Any]] = {}
        exact: dict[str, str] = {}
        for name, entry in (await lineage_of(txn, domain, provenance, shown)).items():
            exact[entry["revision"]] = entry["at"]
            group = by_revision.setdefault(
                entry["revision"],
                {
                    "ref": f"{kind}/{key}",
                    "attributes": [],
                    "origin": entry["origin"].get("type"),
                    "actor": entry["actor"],
                    "at": entry["at"][:19] + "Z",
                    "revision": entry["revision"],
                },
            )
            group["attributes"].append(name)
            if "extraction" in entry:
                group.setdefault("extractions", {})[name] = entry["extraction"]
        entries += sorted(by_revision.values(), key=lambda e: exact[e["revision"]], reverse=True)
    return entries


__all__ = [
    "FarValues",
    "PackRows",
    "assemble",
    "far_values",
    "lineage",
    "lineage_count",
    "pack_rows",
    "recent_changes",
    "recent_changes_max",
    "show_far_values",
]
