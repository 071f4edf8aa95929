"""GET /revisions/{revision}: one Revision, what it changed in the schema, and a page of the Records
and Links it changed (their Attribute names; the values are read with `at`).

The Revision is named like every `at` (an id, a unique prefix, a tag) and must lie on the branch's
first-parent history (snapshots.read_point). What it changed in the schema is the difference between
its schema version and its first parent's (lorebase.schema.changes.schema_diff), with the change set it
applied (kept with it: schema_change_sets, migration 0019) so that a reader sees its renames, backfills
and maps. A backfill or map is values of its Attribute: a caller without the clearance of that
Attribute's sensitivity tags (in the schema before or after) gets the change without them, and
`withheld` names what was left out. A Record or Link a rename moved (deleted under the old name,
created under the new one in the same Revision) is listed once, as `renamed` with `renamed_from`,
and `stats.changes` counts it once (`stats.renamed`: how many moved)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.contract.policy import CLEARANCES, clearance
from lorebase.contract.reads import GetRevision
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase.schema.changes import kept_on_invalid, schema_diff, sent_items
from lorebase_keeper.access.auth import Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import RevisionRow, Txn

DEFAULT_LIMIT = 500
MAX_LIMIT = 5000


async def revision_view(
    rt: Runtime, access: Access, domain: Domain, branch: str, request: GetRevision
) -> dict[str, Any]:
    """The Revision the request names on `branch` (the request's, else the Domain's default)."""
    ref, limit, cursor = request.revision, request.limit, request.cursor
    after = 0 if not cursor else int(decode_cursor(cursor, lambda v: isinstance(v, int) and v >= 0))
    size = min(limit or DEFAULT_LIMIT, MAX_LIMIT)

    async def read(txn: Txn) -> tuple[RevisionRow, RevisionRow | None, list[Any], list[Any], _Moves]:
        point = await read_point(txn, domain, branch, ref)
        assert point.revision is not None
        row = await txn.get_revision(domain.id, point.revision)
        if row is None:
            raise Problem(404, "revision-not-found", f"unknown Revision {ref!r}")
        parent = await txn.get_revision(domain.id, row.parents[0]) if row.parents else None
        changes = await txn.revision_changes(
            domain.id, row.branch, row.generation, after=after, limit=size + 1
        )
        kept = (await txn.schema_change_sets(domain.id, [row.id])).get(row.id, [])
        moves = _Moves()
        if row.origin.get("type") == "schema":
            for item in kept:
                if item.get("op") == "rename_kind":
                    moves.kinds.add(str(item.get("kind")))
                elif item.get("op") == "rename_relation":
                    moves.relations.add(str(item.get("relation")))
            if moves.kinds or moves.relations:
                moves.count = await txn.revision_moves(domain.id, row.branch, row.generation)
        return row, parent, changes, kept, moves

    row, parent, changes, change_set, moves = await rt.db.read("get_revision", read)
    more = len(changes) > size
    changes = changes[:size]
    stats = row.stats
    if moves.count:  # each moved Record or Link is one change here, not a deletion and a creation
        stats = {**stats, "changes": int(stats.get("changes", 0)) - moves.count, "renamed": moves.count}
    version = row.schema_digest or domain.base_digest
    before = version if parent is None else parent.schema_digest or domain.base_digest
    schema = None
    if before != version:
        old = await rt.domains.version(domain, before)
        new = await rt.domains.version(domain, version)
        held = access.permissions(branch)
        shown = [_cleared(item, (old.document, new.document), held) for item in sent_items(change_set)]
        schema = {**schema_diff(old.document, new.document), "changes": shown}
        if kept_on_invalid(change_set) == "clear":  # absent: refuse
            schema["on_invalid"] = "clear"
    return {
        "domain": domain.name,
        "branch": branch,
        "revision": {
            "id": row.id,
            "branch": row.branch,
            "generation": row.generation,
            "parents": row.parents,
            "author": row.author,
            "message": row.message,
            "origin": row.origin,
            "stats": stats,
            "created_at": iso(row.created_at),
            "schema_version": version,
            "schema_changed": schema is not None,
        },
        "changes": [
            _change(entity, name, key, change, attributes, renamed_from)
            for _, entity, name, key, change, attributes, renamed_from in changes
            if not moves.left(entity, name, change)
        ],
        "next_cursor": encode_cursor(changes[-1][0]) if more else None,
        "schema": schema,
    }


@dataclass
class _Moves:
    """The Kinds and Relations a schema Revision renamed (its kept change set), and how many
    Records and Links it moved."""

    kinds: set[str] = field(default_factory=set)
    relations: set[str] = field(default_factory=set)
    count: int = 0

    def left(self, entity: str, name: str, change: str) -> bool:
        """Whether a change is the deletion under the old name of a moved Record or Link."""
        return change == "deleted" and name in (self.kinds if entity == "record" else self.relations)


def _change(
    entity: str, name: str, key: str, change: str, attributes: list[str], renamed_from: str | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entity": entity,
        "name": name,
        "key": key,
        "change": change,
        "attributes": attributes,
    }
    if renamed_from and change == "created":  # moved by a rename (schema_changes/migrate.py)
        out.update(change="renamed", renamed_from=f"{renamed_from}/{key}")
    return out


def _cleared(item: dict[str, Any], documents: tuple[Any, ...], held: frozenset[str]) -> dict[str, Any]:
    """One change as a caller holding `held` may read it: without the values of an Attribute whose
    sensitivity it lacks the clearance of (its `backfill` and `map`)."""
    kinds = {item.get("kind"), item.get("to") if item.get("op") == "rename_kind" else None} - {None}
    names = {item.get("attribute"), item.get("to") if item.get("op") == "rename_attribute" else None} - {None}
    tags = set((item.get("definition") or {}).get("sensitivity") or [])
    for document in documents:
        for kind in kinds:
            attributes = ((document.get("kinds") or {}).get(kind) or {}).get("attributes") or {}
            for name in names:
                tags.update((attributes.get(name) or {}).get("sensitivity") or [])
    if all(clearance(tag) in held for tag in tags if tag in CLEARANCES):
        return item
    withheld = [member for member in ("backfill", "map") if item.get(member) is not None]
    if not withheld:
        return item
    return {**{k: v for k, v in item.items() if k not in withheld}, "withheld": withheld}


__all__ = ["revision_view"]
