"""Planning a Revision: its id, its rows (Records, Links, history with provenance) and its row and
event, as plain rows added to a `CommitRows`.

`plan_commit` does all of it over a list of changes in memory (an Operation, an import, a merge).
A large schema migration plans in two steps (lorebase_keeper/schema_changes/staged/staging.py): its rows
with `plan_rows` while it is staged, outside the branch's lock, the Revision's id standing in as
`lorebase_store.staged_rows.PLACEHOLDER`; and at the commit, under the lock, the Revision itself
with `plan_revision` from a `ChangeSummary` of its changes (the changes digest, counted per Kind and
Relation), which `ChangeDigest` can also make from a stream of the staged changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import iso
from lorebase_keeper.writes.changes import Change
from lorebase_store import CommitRows, LinkRow, RecordRow, RevisionRow
from lorebase_store.stored_form import ALL


@dataclass(frozen=True)
class Head:
    """Where a branch stands inside a commit transaction."""

    revision: str | None
    generation: int
    # The schema version the head stands on (revisions.schema_digest; None: the creation schema).
    schema: str | None = None

    @classmethod
    def of(cls, revision: RevisionRow) -> Head:
        """The head a committed Revision makes."""
        return cls(revision.id, revision.generation, revision.schema_digest)


@dataclass(frozen=True)
class Origin:
    type: str  # operation | import | source_sync | merge | extraction | schema
    ref: str  # invocation id, import source, Source name, ...
    actor: str

    def document(self) -> dict[str, str]:
        return {"type": self.type, "ref": self.ref}


@dataclass(frozen=True)
class SchemaVersion:
    """The schema a Revision changes to: its digest, its document, and the digest its Revisions store
    (None when it is the Domain's creation schema again)."""

    digest: str
    document: dict[str, Any]
    stored: str | None


@dataclass(frozen=True)
class Committed:
    revision: RevisionRow
    changes: list[Change]


def revision_id(
    *,
    domain: str,
    branch: str,
    parents: list[str],
    changes_digest: str,
    author: str,
    message: str,
    origin: dict[str, str],
    created_at: str,
    schema: str | None = None,
) -> str:
    """SHA-256 hex of the canonical serialisation of a Revision's content; a Revision that changes
    the schema has the new version's digest in it too (`schema`)."""
    content = {
        "domain": domain,
        "branch": branch,
        "parents": parents,
        "changes": changes_digest,
        "author": author,
        "message": message,
        "origin": origin,
        "created_at": created_at,
    }
    if schema is not None:
        content["schema"] = schema
    return sha256_hex(canonical_json(content))


def changes_digest(changes: list[Change]) -> str:
    return sha256_hex(canonical_json([[c.entity, c.name, c.key, c.change, c.after] for c in changes]))


@dataclass
class ChangeSummary:
    """What a Revision's id and event say of its changes: the changes digest, how many per Kind and
    Relation, and the keys its event lists (at most `changed_keys_max` in all)."""

    digest: str = ""
    count: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    relations: dict[str, int] = field(default_factory=dict)
    keys: dict[str, list[str]] = field(default_factory=dict)

    def add(self, entity: str, name: str, key: str, changed_keys_max: int) -> None:
        self.count += 1
        if entity == "record":
            self.kinds[name] = self.kinds.get(name, 0) + 1
            kind_keys = self.keys.setdefault(name, [])
            if len(kind_keys) < changed_keys_max:  # the event lists at most that many (a load: 100,000)
                kind_keys.append(key)
        else:
            self.relations[name] = self.relations.get(name, 0) + 1


def summarise(changes: list[Change], changed_keys_max: int) -> ChangeSummary:
    """`ChangeSummary.add` of each change, counted in one pass (an import's 100,000)."""
    summary = ChangeSummary(changes_digest(changes), len(changes))
    kinds, relations, keys = summary.kinds, summary.relations, summary.keys
    for change in changes:
        name = change.name
        if change.entity == "record":
            kinds[name] = kinds.get(name, 0) + 1
            kind_keys = keys.get(name)
            if kind_keys is None:
                kind_keys = keys[name] = []
            if len(kind_keys) < changed_keys_max:
                kind_keys.append(change.key)
        else:
            relations[name] = relations.get(name, 0) + 1
    return summary


class ChangeDigest:
    """`ChangeSummary` of changes streamed in commit order, each as its `element` (the canonical JSON
    of its entry in the changes digest): the same digest as `changes_digest` over the list."""

    def __init__(self, changed_keys_max: int) -> None:
        self._hash = hashlib.sha256(b"[")
        self._max = changed_keys_max
        self.summary = ChangeSummary()

    def add(self, entity: str, name: str, key: str, element: bytes) -> None:
        if self.summary.count:
            self._hash.update(b",")
        self._hash.update(element)
        self.summary.add(entity, name, key, self._max)

    def done(self) -> ChangeSummary:
        self._hash.update(b"]")
        self.summary.digest = self._hash.hexdigest()
        return self.summary


def element(change: Change) -> bytes:
    """A change's entry in the changes digest."""
    return canonical_json([change.entity, change.name, change.key, change.change, change.after])


@dataclass(frozen=True)
class RevisionPlan:
    """Who, why, when and on what a Revision is committed: what its id is made of besides its changes."""

    domain: str
    head: Head
    author: str
    message: str
    origin: Origin
    at: datetime
    parents: list[str] | None = None
    schema: SchemaVersion | None = None

    def parent_ids(self) -> list[str]:
        if self.parents is not None:
            return self.parents
        return [self.head.revision] if self.head.revision else []

    def revision_id(self, branch: str, summary: ChangeSummary) -> str:
        return revision_id(
            domain=self.domain,
            branch=branch,
            parents=self.parent_ids(),
            changes_digest=summary.digest,
            author=self.author,
            message=self.message,
            origin=self.origin.document(),
            created_at=iso(self.at),
            schema=None if self.schema is None else self.schema.digest,
        )


def plan_commit(
    rows: CommitRows,
    *,
    domain: str,
    head: Head,
    changes: list[Change],
    author: str,
    message: str,
    origin: Origin,
    at: datetime,
    stored: tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]],
    changed_keys_max: int,
    extra_events: list[tuple[str, dict[str, Any]]] | None = None,
    parents: list[str] | None = None,
    provenance_of: Callable[[Change, dict[str, Any], str], dict[str, Any]] | None = None,
    schema: SchemaVersion | None = None,
) -> Committed:
    """Add one Revision to `rows`: the revision row, Records, Links, history and outbox events.
    With `schema`, the Revision changes the schema to that version; else it keeps its head's."""
    plan = RevisionPlan(domain, head, author, message, origin, at, parents, schema)
    summary = summarise(changes, changed_keys_max)
    rev_id = plan.revision_id(rows.branch, summary)
    plan_rows(rows, changes, stored, rev_id, head.generation + 1, provenance_of)
    return Committed(plan_revision(rows, plan, summary, rev_id, changed_keys_max, extra_events), changes)


def plan_rows(
    rows: CommitRows,
    changes: list[Change],
    stored: tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]],
    rev_id: str,
    generation: int,
    provenance_of: Callable[[Change, dict[str, Any], str], dict[str, Any]] | None = None,
) -> None:
    """Add the Records, Links and history rows of `changes` to `rows`, as Revision `rev_id` makes them."""
    current, current_links = stored
    # Provenance names the Revision behind each value; its origin, author and time are the Revision's.
    stamp = rev_id
    created = {ALL: stamp}
    for change in changes:
        if change.entity == "record":
            before = current.get((change.name, change.key))
            if change.change == "created" and change.after and len(change.attributes) == len(change.after):
                # Every value from this Revision: its stored form (lorebase_store.stored_form), one
                # object for all such Records of the commit unless the hook adds to it.
                provenance = dict(created) if provenance_of is not None else created
            else:
                provenance = {} if before is None or change.change == "created" else dict(before.provenance)
                _stamp(provenance, change, stamp)
            if provenance_of is not None:
                provenance = provenance_of(change, provenance, rev_id)
            if change.after is None:
                rows.deleted_records.append({"kind": change.name, "key": change.key, "seq": generation})
            else:
                rows.records.append(
                    {
                        "kind": change.name,
                        "key": change.key,
                        "values": change.after,
                        "provenance": provenance,
                        "created_revision": rev_id if before is None else before.created_revision,
                        "updated_revision": rev_id,
                        "new": before is None,
                        "seq": generation,
                    }
                )
        else:
            from_key, _, to_key = change.key.partition("->")
            before_link = current_links.get((change.name, from_key, to_key))
            provenance = (
                {} if before_link is None or change.change == "created" else dict(before_link.provenance)
            )
            provenance["$link"] = stamp
            _stamp(provenance, change, stamp)
            if provenance_of is not None:
                provenance = provenance_of(change, provenance, rev_id)
            if change.after is None:
                rows.deleted_links.append(
                    {"relation": change.name, "from_key": from_key, "to_key": to_key, "seq": generation}
                )
            else:
                rows.links.append(
                    {
                        "relation": change.name,
                        "from_key": from_key,
                        "to_key": to_key,
                        "values": change.after,
                        "provenance": provenance,
                        "revision": rev_id,
                        "new": before_link is None,
                        "seq": generation,
                    }
                )
        rows.history.append(
            {
                "generation": generation,
                "revision": rev_id,
                "entity": change.entity,
                "name": change.name,
                "key": change.key,
                "change": change.change,
                "attributes": change.attributes,
                "before": change.before,
                "after": change.after,
                "provenance": provenance,
            }
        )


def plan_revision(
    rows: CommitRows,
    plan: RevisionPlan,
    summary: ChangeSummary,
    rev_id: str,
    changed_keys_max: int,
    extra_events: list[tuple[str, dict[str, Any]]] | None = None,
) -> RevisionRow:
    """Add Revision `rev_id` (its changes summed up in `summary`) to `rows`: its row, its schema
    version and its events."""
    branch, head, schema = rows.branch, plan.head, plan.schema
    parents, author, message, origin, at = plan.parent_ids(), plan.author, plan.message, plan.origin, plan.at
    created_at = iso(at)
    digest = summary.digest
    schema_digest = head.schema if schema is None else schema.stored
    generation = head.generation + 1
    kinds, relations, keys = summary.kinds, summary.relations, summary.keys
    stats = {"partitions_changed": len(kinds) + len(relations), "changes": summary.count}
    revision = RevisionRow(
        id=rev_id,
        branch=branch,
        generation=generation,
        parents=parents,
        author=author,
        message=message,
        origin=origin.document(),
        stats=stats,
        created_at=at,
        schema_digest=schema_digest,
    )
    if schema is not None and schema.stored is not None:
        rows.schema_versions.append({"digest": schema.digest, "document": schema.document, "created_at": at})
    rows.revisions.append(
        {
            "id": rev_id,
            "branch": branch,
            "generation": generation,
            "parents": parents,
            "author": author,
            "message": message,
            "origin": origin.document(),
            "changes_digest": digest,
            "stats": stats,
            "created_at": created_at,
            "schema_digest": schema_digest,
        }
    )
    truncated = sum(kinds.values()) > changed_keys_max
    if truncated:
        budget = changed_keys_max
        capped: dict[str, list[str]] = {}
        for kind, kind_keys in keys.items():
            capped[kind] = kind_keys[: max(budget, 0)]
            budget -= len(capped[kind])
        keys = {k: v for k, v in capped.items() if v}
    event = {
        "type": "revision.committed",
        "domain": plan.domain,
        "branch": branch,
        "revision": rev_id,
        "parents": parents,
        "generation": generation,
        "author": author,
        "message": message,
        "origin": origin.document(),
        "stats": stats,
        "created_at": created_at,
        "kinds": kinds,
        "relations": relations,
        "schema_changed": schema is not None,
        "keys": keys,
        "keys_truncated": truncated,
    }
    rows.events.append(
        {"type": "revision.committed", "revision": rev_id, "event": event, "created_at": created_at}
    )
    for type_, doc in extra_events or []:
        rows.events.append(
            {
                "type": type_,
                "revision": rev_id,
                "event": {**doc, "head": rev_id, "revisions": [rev_id]},
                "created_at": created_at,
            }
        )
    return revision


_NOTES = ("$via", "$evidence")


def _stamp(provenance: dict[str, Any], change: Change, stamp: str) -> None:
    """Name `stamp` as the Revision behind each changed value; what the provenance said of the old
    values (`$via`: the merge that brought one; `$evidence`: its extraction) goes with them."""
    notes = {note: dict(provenance[note]) for note in _NOTES if provenance.get(note)}
    after = change.after
    for name in change.attributes:
        for held in notes.values():
            held.pop(name, None)
        if after is not None and name in after:
            provenance[name] = stamp
        else:
            provenance.pop(name, None)
    for note in _NOTES:
        if notes.get(note):
            provenance[note] = notes[note]
        else:
            provenance.pop(note, None)


__all__ = [
    "ChangeDigest",
    "ChangeSummary",
    "Committed",
    "Head",
    "Origin",
    "RevisionPlan",
    "SchemaVersion",
    "changes_digest",
    "element",
    "plan_commit",
    "plan_revision",
    "plan_rows",
    "revision_id",
    "summarise",
]
