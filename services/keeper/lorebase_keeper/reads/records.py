"""Record reads: one Record (with Link counts and lineage) and the Links of a Record along a Relation."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from lorebase.contract.reads import GetLinks, GetRecord
from lorebase.cursors import decode_cursor, encode_cursor, pair_of
from lorebase.problems import Problem
from lorebase.schema import Kind
from lorebase_keeper.access import Access, readable, readable_kind
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.reads.lineage import lineage_of
from lorebase_keeper.reads.snapshots import ReadPoint, read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import LinkRow, Txn
from lorebase_store.hot import BranchOrder


def title_of(kind: Kind, shown: dict[str, Any]) -> str | None:
    """The title of a Record from the values the caller may see (a redacted title stays hidden)."""
    return None if kind.title is None or shown.get(kind.title) is None else str(shown[kind.title])


async def load_record(
    txn: Txn, domain: Domain, point: ReadPoint, kind: Kind, key: str
) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """(values, provenance, last-changing Revision) of a Record at the read point, or None."""
    if point.at is None:
        rows = await txn.get_records(domain.id, point.branch.name, kind.name, [key])
        row = rows.get(key)
        return None if row is None else (row.values, row.provenance, row.updated_revision)
    snap = await txn.snapshot_entities(domain.id, point.chain, point.at, "record", kind.name, [key])
    return None if not snap else (snap[0].after or {}, snap[0].provenance, snap[0].revision)


@dataclass(frozen=True)
class FoundRecord:
    """One Record as a caller reads it: where it was read, its Kind, what the caller may see of its
    values (and which it may not), their provenance and the Revision that last changed it."""

    point: ReadPoint
    kind: Kind
    shown: dict[str, Any]
    redacted: list[str]
    provenance: dict[str, Any]
    updated: str


class RecordRequest(Protocol):
    """A request naming one Record (GET /records/{kind}/{key} and its history, lineage, explain and
    Links): the typed request of the endpoint, as the dispatcher decoded it."""

    @property
    def branch(self) -> str: ...
    @property
    def at(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def key(self) -> str: ...


def record_kind(access: Access, domain: Domain, request: RecordRequest) -> Kind:
    """The Kind a Record request names, as the caller may read it on the request's branch: the one
    access check of a Record read (the policy point made the same check before the handler ran, so
    this only finds the Kind; a hidden Kind answers like an unknown one)."""
    return readable_kind(
        access, domain, check_branch_name(request.branch or domain.default_branch), request.kind
    )


async def read_record(
    txn: Txn, access: Access, domain: Domain, request: RecordRequest, kind: Kind
) -> FoundRecord:
    """The Record the request names on its branch (as of its `at`), as the caller may read it; 404
    for a Record that is not there. `kind` is `record_kind` of the request."""
    key = request.key
    point = await read_point(txn, domain, request.branch or None, request.at or None)
    loaded = await load_record(txn, domain, point, kind, key)
    if loaded is None:
        raise Problem(404, "not-found", f"no {kind.name} with key {key!r} on branch {point.branch.name!r}")
    values, provenance, updated = loaded
    shown, redacted = readable(access, domain, point.branch.name).values(kind.name, values)
    return FoundRecord(point, kind, shown, redacted, provenance, updated)


async def get_record(
    rt: Runtime, access: Access, domain: Domain, request: GetRecord
) -> tuple[dict[str, Any], str | None]:
    """The Record document, and where its Revision stands on its branch when that is known
    (read_order; the head reads of one statement know it). The one way a Record is read: at the
    head in one statement, else from the read cache, else in a snapshot."""
    kind = record_kind(access, domain, request)
    if not request.at and not request.links:
        found = await _head_record(rt, access, domain, request, kind)
        if found is not None:
            return found
    # A read with Link counts at the head is many statements: its answer is kept (read_cache.py)
    # and served again while the branch's head, looked up now, is the Revision it describes.
    cached = not request.at and not request.lineage and rt.read_cache.enabled
    cache_key = ("get_record", request.kind, request.key, request.links)
    if cached:
        name = request.branch or domain.default_branch
        exists, head = await rt.db.branch_head(domain.id, name)
        if exists:
            hit = rt.read_cache.get(rt.read_cache.key(domain, name, head, access, cache_key), domain)
            if hit is not None:
                return dict(hit), None

    async def read(txn: Txn) -> dict[str, Any]:
        found = await read_record(txn, access, domain, request, kind)
        point = found.point
        doc = _record_document(
            domain, point.branch.name, point.revision, kind, request.key, found.shown, found.redacted
        )
        doc["updated_revision"] = found.updated
        if request.lineage:
            doc["lineage"] = await lineage_of(
                txn, domain, found.provenance, found.shown, branch=doc["branch"]
            )
        if request.links:
            doc["links"] = await _link_counts(txn, access, domain, point, kind, request.key)
        return doc

    doc = await rt.db.read("get_record", read)
    if cached:
        # Kept under the head this snapshot read (its rows and head agree), whatever was looked up above.
        read_at = rt.read_cache.key(domain, doc["branch"], doc["revision"], access, cache_key)
        rt.read_cache.put(read_at, domain, dict(doc))
    return doc, None


async def _head_record(
    rt: Runtime, access: Access, domain: Domain, request: GetRecord, kind: Kind
) -> tuple[dict[str, Any], str | None] | None:
    """The common read, a Record at the head of a branch, in one statement (None: not materialised
    there; an overlay branch or a missing Record is read the long way). One indexed statement is
    already the cheapest answer as fresh as the head: no cache can skip it (read_cache.py)."""
    name = request.branch or domain.default_branch
    key = request.key
    head, exists, row, order = await rt.db.record_at_head(domain.id, name, kind.name, key)
    if not exists:
        raise Problem(404, "not-found", f"unknown branch {name!r}; GET /branches lists them")
    if row is None:
        return None
    shown, redacted = readable(access, domain, name).values(kind.name, row.values)
    doc = _record_document(domain, name, head, kind, key, shown, redacted)
    doc["updated_revision"] = row.updated_revision
    if request.lineage:
        provenance = row.provenance
        doc["lineage"] = await rt.db.read_one(
            "lineage", lambda txn: lineage_of(txn, domain, provenance, doc["values"], branch=doc["branch"])
        )
    return doc, None if order is None else read_order(domain, name, order)


def read_order(domain: Domain, branch: str, order: BranchOrder) -> str:
    """Where a head stands on its branch, as the gateway's read cache reads it
    (lorebase.contract.endpoint.READ_ORDER_HEADER): "<lineage>.<generation>"."""
    creation = f"{domain.id}/{branch}/{order.created_at.isoformat()}".encode()
    return f"{hashlib.sha256(creation).hexdigest()[:24]}.{order.generation}"


def _record_document(
    domain: Domain,
    branch: str,
    revision: str | None,
    kind: Kind,
    key: str,
    shown: dict[str, Any],
    redacted: list[str],
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "domain": domain.name,
        "branch": branch,
        "revision": revision,
        "ref": f"{kind.name}/{key}",
        "kind": kind.name,
        "key": key,
        "title": title_of(kind, shown),
        "values": shown,
    }
    if redacted:
        doc["redacted"] = redacted
    return doc


async def _link_counts(
    txn: Txn, access: Access, domain: Domain, point: ReadPoint, kind: Kind, key: str
) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in readable(access, domain, point.branch.name).relations:
        relation = domain.schema.relations[name]
        for direction, end_kind in (("forward", relation.from_kind), ("inverse", relation.to_kind)):
            if end_kind != kind.name:
                continue
            name = relation.name if direction == "forward" else (relation.inverse or f"~{relation.name}")
            if point.at is None:
                end = {"from_key": key} if direction == "forward" else {"to_key": key}
                counts[name] = await txn.link_counts(domain.id, point.branch.name, relation.name, **end)
            else:
                counts[name] = len(
                    await links_along(
                        txn, domain, point, relation.name, direction, key, limit=None, after=None
                    )
                )
    return counts


async def links_along(
    txn: Txn,
    domain: Domain,
    point: ReadPoint,
    relation: str,
    direction: str,
    key: str,
    *,
    limit: int | None,
    after: tuple[str, str] | None = None,
) -> list[LinkRow]:
    if point.at is None:
        return await txn.links_of(
            domain.id,
            point.branch.name,
            relation,
            from_keys=[key] if direction == "forward" else None,
            to_keys=[key] if direction == "inverse" else None,
            limit=limit,
            after=after,
        )
    rows = []
    changes = await txn.snapshot_entities(domain.id, point.chain, point.at, "link", relation)
    for change in sorted(changes, key=lambda c: tuple(c.key.partition("->")[::2])):
        from_key, _, to_key = change.key.partition("->")
        if (from_key if direction == "forward" else to_key) != key:
            continue
        if after is not None and (from_key, to_key) <= after:
            continue
        revision = str(change.provenance.get("$link", ""))
        rows.append(LinkRow(relation, from_key, to_key, change.after or {}, change.provenance, revision))
    return rows[:limit] if limit is not None else rows


async def get_links(rt: Runtime, access: Access, domain: Domain, request: GetLinks) -> dict[str, Any]:
    page = domain.settings.model.read.links
    limit, key, relation_name = request.limit, request.key, request.relation
    if limit <= 0:
        limit = page.default_limit
    if limit > page.max_limit:
        raise Problem(400, "invalid-limit", f"limit is at most {page.max_limit} (read.links.max_limit)")
    after = tuple(decode_cursor(request.cursor, pair_of(str))) if request.cursor else None
    kind = record_kind(access, domain, request)

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch or None, request.at or None)
        view = readable(access, domain, point.branch.name)
        named = view.relation(relation_name)
        if named is None:
            raise Problem(
                404, "not-found", f"unknown Relation {relation_name!r}; GET /schema lists the Relations"
            )
        relation, direction = named
        anchor = relation.from_kind if direction == "forward" else relation.to_kind
        if anchor != kind.name:
            raise Problem(
                404,
                "not-found",
                f"Relation {relation_name!r} does not start at {kind.name} (it goes {relation.from_kind} -> {relation.to_kind})",
            )
        if await load_record(txn, domain, point, kind, key) is None:
            raise Problem(
                404, "not-found", f"no {kind.name} with key {key!r} on branch {point.branch.name!r}"
            )
        rows = await links_along(
            txn, domain, point, relation.name, direction, key, limit=limit + 1, after=after
        )
        more = len(rows) > limit
        rows = rows[:limit]
        other = relation.to_kind if direction == "forward" else relation.from_kind
        doc = {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "ref": f"{kind.name}/{key}",
            "relation": relation.name,
            "name": relation_name,
            "direction": direction,
            "links": [
                {
                    "from": f"{relation.from_kind}/{row.from_key}",
                    "to": f"{relation.to_kind}/{row.to_key}",
                    "values": view.link_values(relation.name, row.values),
                    "revision": row.revision,
                }
                for row in rows
            ],
            "other_kind": other,
            "next_cursor": encode_cursor([rows[-1].from_key, rows[-1].to_key]) if more and rows else None,
        }
        return doc

    return await rt.db.read("get_links", read)


__all__ = [
    "FoundRecord",
    "RecordRequest",
    "get_links",
    "get_record",
    "links_along",
    "load_record",
    "read_record",
    "record_kind",
    "title_of",
]
