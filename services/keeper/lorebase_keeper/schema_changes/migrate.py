"""The data migration of a change set: every Record of each Kind it changes, read through the branch's
view inside the commit transaction and rewritten for the new schema, in the same Revision.

Per Record, in order: renamed values move (with their provenance, so lineage still names the
Revision that wrote them), removed ones go, split and merged ones are computed from the values
before (KindMigration.compute), converted ones are put through the change's `map` and
then read as the new type, missing ones take their backfill; then the Record is checked against the
new Kind (types, bounds, enums, patterns, required, unique). Whatever fails is a violation naming
the Record; with `on_invalid: clear`, a failing value that is not required is cleared instead.
A changed Relation's Links are checked again: their values against its link Attributes (values of
one it no longer has dropped), and its cardinality and `required_from` over all of them.
Records of a removed Kind and Links of a removed Relation are deleted when the change says
`delete_data`, else each is a violation.

A renamed Kind's Records (and a renamed Relation's Links) move: the row under the old name is
deleted and one under the new name written with the same key, values (migrated as above),
provenance and `created_revision`. Its history row under the new name says `$renamed_from` (the old
name) in its provenance, so history reads follow the Record back across the rename
(lorebase_store.entity_history `entity_names`), and a read at an earlier Revision finds it under the
name it had then.

Records are read in batches of `batch` keys (keeper.schema_changes.batch_records), each batch told
to `progress`; the work pauses between Records as its `Pacer` says (lorebase_keeper.writes.pace: a
yield every few milliseconds, and in the background a sleep in proportion to the work). The migration runs over a read-only snapshot of the head, outside the branch's commit
lock (change/apart.py stages it; catch_up.py migrates what other commits changed meanwhile), and all of it
is written by the one commit: a branch never shows a half-migrated head. With a `Scope`, only the
Records and Links it names are migrated (the catch-up); unique values are checked across the Kind
by `check_unique`, over the values held in `Migration.unique`.

What the migration finds and writes (`Checked`, `Migration`, `Writes`) is outcome.py; the checks
over a whole Kind or Relation (unique values, a Relation's cardinality and `required_from`) are
checks.py. Their names are imported from here too, as staged/, process.py and change/ do.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value
from lorebase.schema import Kind, Relation, validate_values
from lorebase.schema.changes import KindMigration, Plan
from lorebase_keeper.schema_changes.checks import check_shape, check_unique
from lorebase_keeper.schema_changes.outcome import (
    MAX_VIOLATIONS,
    SAMPLE,
    Checked,
    Contribution,
    Migration,
    Writes,
)
from lorebase_keeper.writes import BranchView, Change, ChangeSet, Pacer, diff_change, link_key

logger = logging.getLogger("lorebase.keeper.schema_changes")

BATCH = 2_000  # keeper.schema_changes.batch_records, its default
_READ = 250  # Records read at a time (their rows are made on the event loop as they arrive)


Progress = Callable[[str, int, int], Awaitable[None]]


@dataclass(frozen=True)
class Scope:
    """The Records (by Kind, under their names before the change set) and Links (by Relation) a
    migration reads; the catch-up's, where a full migration reads every one."""

    records: dict[str, list[str]] = field(default_factory=dict)
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


async def log_progress(kind: str, done: int, total: int) -> None:
    """A log line of a migration's progress."""
    logger.info("schema change: %d of %d %s Records migrated", done, total, kind)


async def migrate(
    view: BranchView,
    plan: Plan,
    on_invalid: str,
    *,
    batch: int = BATCH,
    scope: Scope | None = None,
    progress: Progress | None = None,
    pacer: Pacer | None = None,
) -> Migration:
    """Migrate every Record and Link the plan changes (or those `scope` names), `batch` keys at a
    time, telling `progress` after each batch, pausing as `pacer` says; unique values are checked
    with `check_unique`."""
    pacer = pacer or Pacer()
    migration = Migration(changes=ChangeSet(view, plan.schema, pacer=pacer))
    for kind_name, kind_migration in plan.kinds.items():
        kind = plan.schema.kinds[kind_name]
        if kind_migration.renamed:
            migration.renamed[kind_name] = dict(kind_migration.renamed)
        source = kind_migration.renamed_from
        if source is not None:
            migration.sources[("record", kind_name)] = source
        if scope is None:
            keys = await view.keys_of_kind(source or kind_name)
        else:
            keys = sorted(scope.records.get(source or kind_name, []))
        unique = migration.unique.setdefault(
            kind_name, {name: {} for name, attribute in kind.attributes.items() if attribute.unique}
        )
        for start in range(0, len(keys), batch):
            chunk = keys[start : start + batch]
            if source is not None:
                moved = await _move_records(migration, view, kind, kind_migration, chunk, on_invalid)
                for key, values in moved.items():
                    await pacer.step()
                    for name, holders in unique.items():
                        if values.get(name) is not None:
                            holders.setdefault(values[name], []).append(key)
            else:
                for part in range(0, len(chunk), _READ):  # rows made a few at a time
                    await migration.changes.preload_records(kind_name, chunk[part : part + _READ])
                    await pacer.step()
                for key in chunk:
                    await pacer.step()  # the process serves its other requests between Records
                    state = migration.changes.records[(kind_name, key)]
                    if state.values is None:
                        continue
                    state.values = _migrate_record(
                        migration, kind, kind_migration, key, state.values, on_invalid
                    )
                    for name, holders in unique.items():
                        value = state.values.get(name)
                        if value is not None:
                            holders.setdefault(value, []).append(key)
            if len(keys) > batch and progress is not None:
                await progress(kind_name, start + len(chunk), len(keys))
    if scope is None:
        await check_unique(migration, migration.unique)
    for kind_name, delete in plan.removed_kinds.items():
        removed = None if scope is None else sorted(scope.records.get(kind_name, []))
        await _remove_records(migration, view, kind_name, delete, batch, removed)
    for relation, delete in plan.removed_relations.items():
        pairs = None if scope is None else sorted(scope.links.get(relation, []))
        await _remove_links(migration, view, relation, delete, batch, pairs)
    for old, new in plan.renamed_relations.items():
        pairs = None if scope is None else sorted(scope.links.get(old, []))
        await _move_links(migration, view, old, new, batch, pairs)
    for name, members in plan.changed_relations.items():
        changed = plan.schema.relations[name]
        every = await view.pairs_of_relation(name)
        if "attributes" in members:
            pairs = every if scope is None else sorted(scope.links.get(name, []))
            maps = plan.link_maps.get(name, {})
            await _migrate_links(migration, changed, pairs, on_invalid, batch, maps)
        if {"cardinality", "required_from"} & set(members):
            # Whole-Relation rules: checked over every Link, also at the catch-up.
            await check_shape(migration, view, changed, every)
    return migration


async def _migrate_links(
    migration: Migration,
    relation: Relation,
    pairs: list[tuple[str, str]],
    on_invalid: str,
    batch: int,
    maps: dict[str, dict[str, Any]],
) -> None:
    """The Links' values migrated to the Relation's link Attributes as a Record's are to its Kind's
    (`_migrate_record`): a value of one it no longer has is dropped; each other value is looked up
    in its `maps` entry, then read as the link Attribute's type; one that does not convert or fit
    is a violation (cleared with on_invalid: clear, when the link Attribute is not required)."""
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        await migration.changes.preload_links(relation.name, chunk)
        for from_key, to_key in chunk:
            await migration.changes.pacer.step()
            state = migration.changes.links[(relation.name, from_key, to_key)]
            if state.values is None:
                continue
            ref = f"{relation.name}/{link_key(from_key, to_key)}"
            values = {n: v for n, v in state.values.items() if n in relation.attributes}
            failed: dict[str, tuple[str, str]] = {}
            for name, value in list(values.items()):
                value_map = maps.get(name)
                mapped = value_map.get(canonical_text(value), value) if value_map else value
                try:
                    values[name] = canonical_value(relation.attributes[name], mapped)
                except ValueProblem as problem:
                    failed[name] = (problem.rule, f"{problem.message} (the value was {value!r})")
            for name, (rule, message) in failed.items():
                values.pop(name)
                path = f"{ref}.{name}"
                if on_invalid == "clear" and not relation.attributes[name].required:
                    migration.clear(link=ref, path=path, rule=rule, message=message)
                    continue
                migration.violate(link=ref, path=path, rule=rule, message=message)
            _, issues = validate_values(relation.attributes, values, path=ref, partial=False, stored=True)
            for issue in issues:
                name = issue.path.rsplit(".", 1)[-1]
                if name in failed:
                    continue
                if on_invalid == "clear" and name in values and not relation.attributes[name].required:
                    values.pop(name)
                    migration.clear(link=ref, path=issue.path, rule=issue.rule, message=issue.message)
                    continue
                migration.violate(link=ref, path=issue.path, rule=issue.rule, message=issue.message)
            state.values = values


async def _move_records(
    migration: Migration,
    view: BranchView,
    kind: Kind,
    plan: KindMigration,
    keys: list[str],
    on_invalid: str,
) -> dict[str, dict[str, Any]]:
    """Move a batch of a renamed Kind's Records to its new name; their migrated values by key."""
    source = plan.renamed_from or kind.name
    rows = await view.get_records(source, keys)
    out: dict[str, dict[str, Any]] = {}
    for key, row in rows.items():
        await migration.changes.pacer.step()
        values = _migrate_record(migration, kind, plan, key, dict(row.values), on_invalid)
        deleted = diff_change("record", source, key, row.values, None)
        if deleted is not None:
            migration.deletions.append(deleted)
            migration.deleted_records[(source, key)] = row
        migration.deletions.append(Change("record", kind.name, key, "created", list(values), None, values))
        migration.moved_records[(kind.name, key)] = row
        out[key] = values
    return out


async def _move_links(
    migration: Migration,
    view: BranchView,
    old: str,
    new: str,
    batch: int,
    pairs: list[tuple[str, str]] | None,
) -> None:
    """Move a renamed Relation's Links (or those in `pairs`) to its new name, values and provenance
    kept."""
    migration.sources[("link", new)] = old
    if pairs is None:
        pairs = await view.pairs_of_relation(old)
    for start in range(0, len(pairs), batch):
        rows = await view.get_links(old, pairs[start : start + batch])
        for (from_key, to_key), row in rows.items():
            await migration.changes.pacer.step()
            key = link_key(from_key, to_key)
            deleted = diff_change("link", old, key, row.values, None)
            if deleted is not None:
                migration.deletions.append(deleted)
                migration.deleted_links[(old, from_key, to_key)] = row
            values = dict(row.values)
            migration.deletions.append(Change("link", new, key, "created", list(values), None, values))
            migration.moved_links[(new, from_key, to_key)] = row


def _migrate_record(
    migration: Migration,
    kind: Kind,
    plan: KindMigration,
    key: str,
    values: dict[str, Any],
    on_invalid: str,
) -> dict[str, Any]:
    ref = f"{kind.name}/{key}"
    out = plan.migrate(values)
    failed = plan.compute(kind, values, out)
    for name, value_map in plan.converted.items():
        value = out.get(name)
        if value is None or kind.attributes[name].derived is not None:
            continue
        mapped = value_map.get(canonical_text(value), value) if value_map else value
        try:
            out[name] = canonical_value(kind.attributes[name], mapped)
        except ValueProblem as problem:
            failed[name] = (problem.rule, f"{problem.message} (the value was {value!r})")
    for name, backfill in plan.backfills.items():
        if out.get(name) is not None or name in failed:
            continue
        value = backfill.evaluate(out)
        if value is None:
            if backfill.expression is not None:
                failed[name] = (
                    "backfill.failed",
                    f"the backfill {backfill.expression.source!r} gave no value",
                )
            continue
        out[name] = value
    for name, (rule, message) in failed.items():
        out.pop(name, None)
        if on_invalid == "clear" and not kind.attributes[name].required:
            migration.clear(record=ref, path=f"{ref}.{name}", rule=rule, message=message)
            continue
        migration.violate(record=ref, path=f"{ref}.{name}", rule=rule, message=message)
    _, issues = validate_values(kind.attributes, out, path=ref, partial=False, stored=True)
    for issue in issues:
        name = issue.path.rsplit(".", 1)[-1]
        if name in failed:
            continue
        if on_invalid == "clear" and name in out and not kind.attributes.get(name, _REQUIRED).required:
            out.pop(name, None)
            migration.clear(record=ref, path=issue.path, rule=issue.rule, message=issue.message)
            continue
        migration.violate(record=ref, path=issue.path, rule=issue.rule, message=issue.message)
    return out


class _Required:
    required = True


_REQUIRED: Any = _Required()


async def _remove_records(
    migration: Migration, view: BranchView, kind: str, delete: bool, batch: int, keys: list[str] | None
) -> None:
    if keys is None:
        keys = await view.keys_of_kind(kind)
    else:  # the catch-up: those of `keys` still there
        keys = sorted(await view.get_records(kind, keys))
    if keys and not delete:
        for key in keys[:MAX_VIOLATIONS]:
            migration.violate(
                record=f"{kind}/{key}",
                path=f"{kind}/{key}",
                rule="kind.removed",
                message=f"Kind {kind} is removed and this Record is one of its {len(keys)}; "
                "say delete_data: true on the change to delete them",
            )
        return
    for start in range(0, len(keys), batch):
        rows = await view.get_records(kind, keys[start : start + batch])
        for key, row in rows.items():
            await migration.changes.pacer.step()
            change = diff_change("record", kind, key, row.values, None)
            if change is not None:
                migration.deletions.append(change)
                migration.deleted_records[(kind, key)] = row


async def _remove_links(
    migration: Migration,
    view: BranchView,
    relation: str,
    delete: bool,
    batch: int,
    pairs: list[tuple[str, str]] | None,
) -> None:
    if pairs is None:
        pairs = await view.pairs_of_relation(relation)
    else:  # the catch-up: those of `pairs` still there
        pairs = sorted(await view.get_links(relation, pairs))
    if pairs and not delete:
        for from_key, to_key in pairs[:MAX_VIOLATIONS]:
            migration.violate(
                link=f"{relation}/{link_key(from_key, to_key)}",
                path=f"{relation}/{link_key(from_key, to_key)}",
                rule="relation.removed",
                message=f"Relation {relation} is removed and this Link is one of its {len(pairs)}; "
                "say delete_data: true on the change to delete them",
            )
        return
    for start in range(0, len(pairs), batch):
        rows = await view.get_links(relation, pairs[start : start + batch])
        for (from_key, to_key), row in rows.items():
            await migration.changes.pacer.step()
            change = diff_change("link", relation, link_key(from_key, to_key), row.values, None)
            if change is not None:
                migration.deletions.append(change)
                migration.deleted_links[(relation, from_key, to_key)] = row


__all__ = [
    "BATCH",
    "SAMPLE",
    "Checked",
    "Contribution",
    "Migration",
    "Progress",
    "Scope",
    "Writes",
    "check_unique",
    "log_progress",
    "migrate",
]
