"""A change set's migration staged over one head, outside the branch's commit lock, and caught up at
its commit with what other commits changed meanwhile.

`stage` runs the whole migration (migrate.py: read, migrate and check, in batches) in one read-only
snapshot of the head (Database.read, REPEATABLE READ), so writes and reads on the branch go on while
it runs, and keeps what the commit will write in memory: the changes, the rows they change and the
migration that made them (for provenance).

At the commit, under the branch's lock, `catch_up` asks the branch's history which Records and Links
the commits since the staged head changed (`touched_between`), and migrates those of the Kinds and
Relations the change set migrates again from the head as it is now, in the same way; their staged
changes are dropped for the new ones, and unique values are checked again across the Kind. So no
write that landed meanwhile is lost or left unmigrated, and the Revision is still the one step that
makes the whole change visible. The catch-up is refused (409 schema-migration-moved, nothing changed)
when more than `keeper.schema_changes.catch_up_max` Records and Links changed meanwhile, or when it
would change a Record or Link it was not asked to (a derived value of a neighbour): the caller sends
the change set again, and it stages from the new head.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lorebase.problems import Problem
from lorebase.schema.changes import Plan
from lorebase_keeper.schema_changes.migrate import (
    SAMPLE,
    Migration,
    Progress,
    Scope,
    check_unique,
    migrate,
)
from lorebase_keeper.writes import LARGE, BranchView, Change, Head
from lorebase_store import BranchRow, LinkRow, RecordRow
from lorebase_store.chains import branch_chain

Ref = tuple[str, str, str]  # (entity, name before the change set, key)


@dataclass
class Staged:
    """A migration planned over `head`: the changes the commit writes (sorted), the rows as they were
    before them, and the migration behind each change (the staged one, or a catch-up's)."""

    head: Head
    migration: Migration
    changes: list[Change]
    records: dict[tuple[str, str], RecordRow]
    links: dict[tuple[str, str, str], LinkRow]
    owners: dict[Ref, Migration] = field(default_factory=dict)
    caught_up: int = 0  # Records and Links migrated again at the commit

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.migration.violations

    @property
    def violation_count(self) -> int:
        return self.migration.violation_count

    @property
    def cleared(self) -> list[dict[str, Any]]:
        """The values on_invalid: clear cleared (the staged migration's and the catch-up's)."""
        seen = {id(self.migration): self.migration, **{id(m): m for m in self.owners.values()}}
        # A Record migrated again at the catch-up is named once, as the catch-up left it.
        by_path = {entry["path"]: entry for m in seen.values() for entry in m.cleared}
        return list(by_path.values())

    def provenance_of(self, change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        owner = self.owners.get(_ref(self.migration, change), self.migration)
        return owner.provenance_of(change, provenance, revision)

    def migrated(self) -> dict[str, int]:
        """How many Records and Links the migration changes; one a rename moved (deleted under its
        old name, created under the new one) counts once."""
        refs = {_ref(self.migration, change) for change in self.changes}
        records = sum(1 for entity, _, _ in refs if entity == "record")
        return {"records": records, "links": len(refs) - records}

    def writes(self, schema: Any) -> dict[str, Any]:
        """What the migration writes (Migration.writes), over the staged and the caught-up changes."""
        parts: dict[int, tuple[Migration, list[Change]]] = {}
        for change in self.changes:
            owner = self.owners.get(_ref(self.migration, change), self.migration)
            parts.setdefault(id(owner), (owner, []))[1].append(change)
        out: dict[str, Any] = {"counts": {}, "derived": {}, "sample": [], "derived_sample": []}
        for owner, changes in parts.values():
            part = owner.writes(changes, schema)
            for name in ("counts", "derived"):
                for label, count in part[name].items():
                    out[name][label] = out[name].get(label, 0) + count
            for name in ("sample", "derived_sample"):
                out[name] = (out[name] + part[name])[:SAMPLE]
        return out


async def stage(
    view: BranchView, head: Head, plan: Plan, on_invalid: str, *, batch: int, progress: Progress | None
) -> Staged:
    """The migration of `plan` over the branch as `view` reads it (a snapshot at `head`)."""
    migration = await migrate(view, plan, on_invalid, batch=batch, progress=progress)
    return await _finish(migration, head)


async def catch_up(
    view: BranchView,
    row: BranchRow,
    head: Head,
    staged: Staged,
    plan: Plan,
    on_invalid: str,
    *,
    batch: int,
    limit: int,
) -> Staged:
    """`staged` brought from its head to `head` (the branch's, under its lock): what the commits in
    between changed of the migrated Kinds and Relations, migrated again from `head`."""
    chain = await branch_chain(view.txn, row.domain_id, row)
    older = None if staged.head.revision is None else (row.name, staged.head.generation)
    touched = await view.txn.touched_between(row.domain_id, chain, older, (row.name, head.generation))
    kinds = {migration.renamed_from or name for name, migration in plan.kinds.items()} | set(
        plan.removed_kinds
    )
    relations = set(plan.removed_relations) | set(plan.renamed_relations) | set(plan.changed_relations)
    for name, members in plan.changed_relations.items():
        if {"cardinality", "required_from"} & set(members):  # Records added meanwhile count too
            relation = plan.schema.relations[name]
            kinds |= {relation.from_kind, relation.to_kind}
    scope = Scope()
    refs: set[Ref] = set()
    for entity, name, key in touched:
        if entity == "record" and name in kinds:
            scope.records.setdefault(name, []).append(key)
        elif entity == "link" and name in relations:
            from_key, _, to_key = key.partition("->")
            scope.links.setdefault(name, []).append((from_key, to_key))
        else:
            continue
        refs.add((entity, name, key))
    if not refs:
        return Staged(head, staged.migration, staged.changes, staged.records, staged.links, staged.owners)
    if len(refs) > limit:
        raise moved(
            row.name,
            f"{len(refs)} Records and Links of the Kinds and Relations it migrates "
            f"changed meanwhile, more than keeper.schema_changes.catch_up_max ({limit})",
        )
    fresh = await migrate(view, plan, on_invalid, batch=batch, scope=scope)
    held = _held_without(staged.migration, refs)
    for kind_name, attributes in fresh.unique.items():
        for name, holders in attributes.items():
            target = held.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                target.setdefault(value, []).extend(keys)
    again = {
        kind_name: {key for entity, name, key in refs if entity == "record" and name == source}
        for kind_name in fresh.unique
        for source in [_source(fresh, "record", kind_name)]
    }
    check_unique(fresh, held, again)
    caught = await _finish(fresh, head)
    if caught.violation_count:
        return caught
    strays = sorted(f"{c.name}/{c.key}" for c in caught.changes if _ref(fresh, c) not in refs)
    if strays:
        raise moved(row.name, f"the writes meanwhile change what it derives for {', '.join(strays[:5])}")
    changes = [c for c in staged.changes if _ref(staged.migration, c) not in refs]
    owners = {ref: owner for ref, owner in staged.owners.items() if ref not in refs}
    owners.update({_ref(fresh, c): fresh for c in caught.changes})
    records = {
        k: r
        for k, r in staged.records.items()
        if ("record", _source(staged.migration, "record", k[0]), k[1]) not in refs
    }
    records.update(caught.records)
    links = {
        k: r
        for k, r in staged.links.items()
        if ("link", _source(staged.migration, "link", k[0]), f"{k[1]}->{k[2]}") not in refs
    }
    links.update(caught.links)
    merged = sorted([*changes, *caught.changes], key=_order)
    return Staged(head, staged.migration, merged, records, links, owners, staged.caught_up + len(refs))


def moved(branch: str, why: str) -> Problem:
    return Problem(
        409,
        "schema-migration-moved",
        f"branch {branch!r} moved while the change set's migration ran and it could not be brought "
        f"up to date: {why}; nothing changed, send the change set again",
        branch=branch,
    )


async def _finish(migration: Migration, head: Head) -> Staged:
    """The migration's changes (none when it found violations), with the ChangeSet's own checks."""
    changes = [] if migration.violations else await migration.changes.finish()
    for issue in migration.changes.issues:
        record = issue["path"].split(".", 1)[0]
        migration.violate(record=record, **issue)

    def rows() -> Staged:
        every = sorted([*changes, *migration.deletions], key=_order)
        records, links = migration.changes.stored()
        records = {**records, **migration.deleted_records, **migration.moved_records}
        links = {**links, **migration.deleted_links, **migration.moved_links}
        return Staged(head, migration, every, records, links)

    # Seconds of CPU at a million Records: in a thread, so the process serves its other requests.
    return await asyncio.to_thread(rows) if len(changes) >= LARGE else rows()


def _order(change: Change) -> tuple[bool, str, str]:
    """A commit's order of changes: Records first, then by name and key."""
    return (change.entity != "record", change.name, change.key)


def _source(migration: Migration, entity: str, name: str) -> str:
    return migration.sources.get((entity, name), name)


def _ref(migration: Migration, change: Change) -> Ref:
    return (change.entity, _source(migration, change.entity, change.name), change.key)


def _held_without(migration: Migration, refs: set[Ref]) -> dict[str, dict[str, dict[Any, list[str]]]]:
    """The staged unique values, without those of the Records migrated again."""
    out: dict[str, dict[str, dict[Any, list[str]]]] = {}
    for kind_name, attributes in migration.unique.items():
        source = _source(migration, "record", kind_name)
        for name, holders in attributes.items():
            kept = out.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                left = [k for k in keys if ("record", source, k) not in refs]
                if left:
                    kept[value] = left
    return out


__all__ = ["Staged", "catch_up", "moved", "stage"]
