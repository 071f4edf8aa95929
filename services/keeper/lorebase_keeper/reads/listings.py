"""Plain paged listings: every Record of a Kind (GET /kinds/{kind}/records) and every Link of a
Relation (GET /relations/{relation}/links), at a branch's head or at a Revision, with cursors.

A Record listing is a query without a filter and without coverage (query.py answers it, with its
limits, redaction and cursors); a Link listing reads the Relation's materialised Links at a head and
the snapshot of its history at a Revision, by (from key, to key), as a Record's Links are read."""

from __future__ import annotations

from typing import Any

from lorebase.contract.reads import ListLinks, ListRecords, QueryBody
from lorebase.cursors import decode_cursor, encode_cursor, pair_of
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.query import run_query
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import LinkRow, Txn


async def list_records(rt: Runtime, access: Access, domain: Domain, request: ListRecords) -> dict[str, Any]:
    query = QueryBody(
        kind=request.kind,
        limit=request.limit or None,
        cursor=request.cursor or None,
        branch=request.branch or None,
        at=request.at or None,
        coverage=False,
    )
    return await run_query(rt, access, domain, query)


async def list_links(rt: Runtime, access: Access, domain: Domain, request: ListLinks) -> dict[str, Any]:
    page = domain.settings.model.read.links
    limit, cursor, relation_name = request.limit, request.cursor, request.relation
    if limit <= 0:
        limit = page.default_limit
    if limit > page.max_limit:
        raise Problem(400, "invalid-limit", f"limit is at most {page.max_limit} (read.links.max_limit)")
    after = tuple(decode_cursor(cursor, pair_of(str))) if cursor else None

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch or None, request.at or None)
        view = readable(access, domain, point.branch.name)
        relation = domain.schema.relations.get(relation_name)
        if relation is None or relation.name not in view.relations:
            raise Problem(
                404, "not-found", f"unknown Relation {relation_name!r}; GET /schema lists the Relations"
            )
        if point.at is None:
            rows = await txn.links_of(
                domain.id,
                point.branch.name,
                relation.name,
                limit=limit + 1,
                after=after,  # type: ignore[arg-type]
            )
        else:
            changes = await txn.snapshot_entities(domain.id, point.chain, point.at, "link", relation.name)
            rows = []
            for change in sorted(changes, key=lambda c: tuple(c.key.partition("->")[::2])):
                from_key, _, to_key = change.key.partition("->")
                if after is not None and (from_key, to_key) <= after:
                    continue
                revision = str(change.provenance.get("$link", ""))
                rows.append(
                    LinkRow(relation.name, from_key, to_key, change.after or {}, change.provenance, revision)
                )
                if len(rows) > limit:
                    break
        more = len(rows) > limit
        rows = rows[:limit]
        return {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "relation": relation.name,
            "from_kind": relation.from_kind,
            "to_kind": relation.to_kind,
            "links": [
                {
                    "from": f"{relation.from_kind}/{row.from_key}",
                    "to": f"{relation.to_kind}/{row.to_key}",
                    "values": view.link_values(relation.name, row.values),
                    "revision": row.revision,
                }
                for row in rows
            ],
            "next_cursor": encode_cursor([rows[-1].from_key, rows[-1].to_key]) if more and rows else None,
        }

    return await rt.db.read("list_links", read)


__all__ = ["list_links", "list_records"]
