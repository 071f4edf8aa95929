"""History and lineage of one Record (seed section 3).

History lists the Revisions that changed the Record on the branch, newest first (with values=true,
`before` and `after` hold the same members: the changed Attributes the caller may read, null on
the side where one had no value; a creation has `before` null and a deletion `after` null, and the
whole Record at a Revision is a read with `at`); lineage answers,
per Attribute holding a value, where that value came from. Both read one index range per Record,
so their cost follows the Record's number of changes, not the length of the branch, and both take
`at` (the answer as of an earlier Revision, read along its first-parent chain).
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.reads import GetHistory, RecordAt
from lorebase.cursors import decode_cursor, encode_cursor, pair_of
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.lineage import evidence_of, lineage_of, revision_summary
from lorebase_keeper.reads.records import read_record, record_kind
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import RENAMED_FROM, HistoryRow, RevisionRow, Txn


def _provenance(
    revision: RevisionRow, row: HistoryRow, name: str, evidence: dict[str, Any]
) -> dict[str, Any]:
    """The provenance of one changed value: the Revision and its origin, and the evidence of an
    extracted value."""
    entry: dict[str, Any] = {"revision": revision.id, **revision.origin}
    held = (row.provenance.get("$evidence") or {}).get(name)
    if held in evidence:
        entry["extraction"] = evidence[held]
    return entry


def _cursor(row: HistoryRow) -> str:
    return encode_cursor([row.generation, row.seq])


async def get_history(rt: Runtime, access: Access, domain: Domain, request: GetHistory) -> dict[str, Any]:
    page = domain.settings.model.read.history
    limit = request.limit or page.default_limit
    if not 1 <= limit <= page.max_limit:
        raise Problem(400, "invalid-limit", f"limit is at most {page.max_limit} (read.history.max_limit)")
    before = tuple(decode_cursor(request.cursor, pair_of(int))) if request.cursor else None
    key, values = request.key, request.values
    kind = record_kind(access, domain, request)

    async def read(txn: Txn) -> dict[str, Any]:
        point = await read_point(txn, domain, request.branch or None, request.at or None)
        former = await txn.entity_names(domain.id, point.chain, point.at, "record", kind.name, key)
        rows = await txn.entity_history(
            domain.id,
            point.chain,
            point.at,
            "record",
            kind.name,
            key,
            limit=limit + 1,
            before=before,
            former=former,
        )
        if not rows and before is None:
            raise Problem(
                404, "not-found", f"no {kind.name} with key {key!r} was ever on branch {point.branch.name!r}"
            )
        more = len(rows) > limit
        rows = rows[:limit]
        revisions = await txn.get_revisions(domain.id, [row.revision for row in rows])
        evidence = await evidence_of(txn, domain.id, [row.provenance for row in rows])
        readable = readable_view(access, domain, point.branch.name).cleared(kind.name)

        def changed(side: dict[str, Any] | None, attributes: list[str]) -> dict[str, Any] | None:
            """One side of a change: the changed Attributes' values (null where there was none)."""
            return None if side is None else {a: side.get(a) for a in attributes}

        changes = []
        for row in rows:
            revision = revisions[row.revision]
            attributes = [a for a in row.attributes if a in readable]
            entry: dict[str, Any] = {
                **revision_summary(revision),
                "change": row.change,
                "attributes": attributes,
                "provenance": {a: _provenance(revision, row, a, evidence) for a in attributes},
            }
            renamed_from = row.provenance.get(RENAMED_FROM)
            if isinstance(renamed_from, str):  # a rename of its Kind moved it (schema_changes/migrate.py)
                entry["change"] = "renamed"
                entry["renamed_from"] = f"{renamed_from}/{key}"
            merged_into = row.provenance.get("$merged_into")
            if row.change == "deleted" and isinstance(merged_into, str):
                entry["merged_into"] = f"{kind.name}/{merged_into}"  # reconciliation (record_merge.py)
            if values:  # symmetric: both sides hold the changed Attributes, and only those
                entry["before"] = changed(row.before, attributes)
                entry["after"] = changed(row.after, attributes)
            changes.append(entry)
        return {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "ref": f"{kind.name}/{key}",
            "changes": changes,
            "next_cursor": _cursor(rows[-1]) if more and rows else None,
        }

    return await rt.db.read("get_history", read)


async def get_lineage(rt: Runtime, access: Access, domain: Domain, request: RecordAt) -> dict[str, Any]:
    cap = domain.settings.model.read.history.lineage_count_max
    key = request.key
    kind = record_kind(access, domain, request)

    async def read(txn: Txn) -> dict[str, Any]:
        found = await read_record(txn, access, domain, request, kind)
        point, shown, redacted = found.point, found.shown, found.redacted
        lineage = await lineage_of(txn, domain, found.provenance, shown, branch=point.branch.name)
        former = await txn.entity_names(domain.id, point.chain, point.at, "record", kind.name, key)
        count = await txn.count_entity_history(
            domain.id, point.chain, point.at, "record", kind.name, key, cap=cap, former=former
        )
        doc: dict[str, Any] = {
            "domain": domain.name,
            "branch": point.branch.name,
            "revision": point.revision,
            "ref": f"{kind.name}/{key}",
            "attributes": {
                name: {"value": shown[name], **lineage[name]} for name in shown if name in lineage
            },
            "changes": min(count, cap),
            "changes_truncated": count > cap,
        }
        if redacted:
            doc["redacted"] = redacted
        return doc

    return await rt.db.read("get_lineage", read)


__all__ = ["get_history", "get_lineage"]
