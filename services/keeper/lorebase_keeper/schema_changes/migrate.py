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
(lorebase_store.revisions `entity_names`), and a read at an earlier Revision finds it under the
name it had then.

Records are read in batches of `batch` keys (keeper.schema_changes.batch_records), each batch told
to `progress`; the work pauses between Records as its `Pacer` says (lorebase_keeper.writes.pace: a
yield every few milliseconds, and in the background a sleep in proportion to the work). The migration runs over a read-only snapshot of the head, outside the branch's commit
lock (change.py stages it; catch_up.py migrates what other commits changed meanwhile), and all of it
is written by the one commit: a branch never shows a half-migrated head. With a `Scope`, only the
Records and Links it names are migrated (the catch-up); unique values are checked across the Kind
by `check_unique`, over the values held in `Migration.unique`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value
from lorebase.schema import DomainSchema, Kind, Relation, validate_values
from lorebase.schema.changes import KindMigration, Plan
from lorebase_keeper.writes import BranchView, Change, ChangeSet, Pacer, diff_change, link_key
from lorebase_store import LinkRow, RecordRow

logger = logging.getLogger("lorebase.keeper.schema_changes")

BATCH = 2_000  # keeper.schema_changes.batch_records, its default
MAX_VIOLATIONS = 1000
SAMPLE = 20  # values written (and derived values changed) a change set's answer shows
_READ = 250  # Records read at a time (their rows are made on the event loop as they arrive)


@dataclass
class Checked:
    """What a migration found that its commit still needs once its rows are staged: the violations,
    the values on_invalid: clear cleared, the names before renames and the unique values (the
    catch-up checks those written meanwhile against them). A migration in a process of its own
    (process.py) sends back this much (`document`), not its Records."""

    violations: list[dict[str, Any]] = field(default_factory=list)
    violation_count: int = 0
    # Values cleared by on_invalid: clear, as violations would name them (the first MAX_VIOLATIONS).
    cleared: list[dict[str, Any]] = field(default_factory=list)
    # (entity, new name) -> the name before the change set, of a renamed Kind or Relation.
    sources: dict[tuple[str, str], str] = field(default_factory=dict)
    # Kind -> unique Attribute -> value -> the keys holding it after the migration.
    unique: dict[str, dict[str, dict[Any, list[str]]]] = field(default_factory=dict)

    def violate(self, **violation: Any) -> None:
        self.violation_count += 1
        if len(self.violations) < MAX_VIOLATIONS:
            self.violations.append(violation)

    def clear(self, **violation: Any) -> None:
        """A value on_invalid: clear cleared instead of a violation."""
        if len(self.cleared) < MAX_VIOLATIONS:
            self.cleared.append(violation)

    def document(self) -> dict[str, Any]:
        """As JSON: the names as [entity, name, source], the unique values as [value, keys] pairs
        (a value need not be a string)."""
        return {
            "violations": self.violations,
            "violation_count": self.violation_count,
            "cleared": self.cleared,
            "sources": [[entity, name, source] for (entity, name), source in self.sources.items()],
            "unique": {
                kind: {
                    name: [[value, keys] for value, keys in holders.items()]
                    for name, holders in attributes.items()
                }
                for kind, attributes in self.unique.items()
            },
        }

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> Checked:
        return cls(
            document["violations"],
            document["violation_count"],
            document["cleared"],
            {(entity, name): source for entity, name, source in document["sources"]},
            {
                kind: {name: {value: keys for value, keys in holders} for name, holders in attributes.items()}
                for kind, attributes in document["unique"].items()
            },
        )


@dataclass(kw_only=True)
class Migration(Checked):
    """The migration's outcome: the change set over the new schema, the deletions it adds, and
    every violation found."""

    changes: ChangeSet
    deletions: list[Change] = field(default_factory=list)
    deleted_records: dict[tuple[str, str], RecordRow] = field(default_factory=dict)
    deleted_links: dict[tuple[str, str, str], LinkRow] = field(default_factory=dict)
    # Kind -> old name -> new name, for provenance.
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)
    # Records and Links moved to a new Kind or Relation name: (new name, key...) -> the row moved.
    moved_records: dict[tuple[str, str], RecordRow] = field(default_factory=dict)
    moved_links: dict[tuple[str, str, str], LinkRow] = field(default_factory=dict)

    def provenance_of(self, change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        """A renamed value keeps the provenance it had under its old name; a moved Record or Link
        keeps its own, and its history row names where it came from."""
        if change.entity == "record" and (change.name, change.key) in self.moved_records:
            moved = self.moved_records[(change.name, change.key)]
            return self._moved(moved.values, moved.provenance, change, revision)
        if change.entity == "link":
            from_key, _, to_key = change.key.partition("->")
            link = self.moved_links.get((change.name, from_key, to_key))
            if link is not None:
                kept = self._moved(link.values, link.provenance, change, revision)
                return {**kept, "$link": link.provenance.get("$link", revision)}
        renamed = self.renamed.get(change.name) if change.entity == "record" else None
        if not renamed or change.before is None:
            return provenance
        state = self.changes.records.get((change.name, change.key))
        before = None if state is None or state.before is None else state.before.provenance
        if not before:
            return provenance
        for old, new in renamed.items():
            if old in before and change.after is not None and new in change.after:
                provenance[new] = before[old]
        return provenance

    def writes(self, changes: list[Change], schema: DomainSchema) -> dict[str, Any]:
        """What the migration writes (SchemaWrites): values written and derived values changed, per
        `Kind.Attribute`, with the first SAMPLE of each; values a rename moved are not writes."""
        out = Writes()
        for change in changes:
            for entry in self.contributions(change, schema):
                out.add(*entry)
        return out.document()

    def contributions(self, change: Change, schema: DomainSchema) -> list[Contribution]:
        """What one change counts in `writes`: (counts or derived, `Kind.Attribute`, its sample), or
        for a Link's values (converted or dropped), (counts, `Relation.attribute`, its sample)."""
        if change.entity == "link":
            return self._link_contributions(change, schema)
        kind = schema.kinds.get(change.name)
        if change.entity != "record" or change.after is None or kind is None:
            return []
        out: list[Contribution] = []
        renamed = self.renamed.get(change.name, {})  # old -> new
        moved = self.moved_records.get((change.name, change.key))
        held = moved.values if moved is not None else (change.before or {})
        before = {n: v for n, v in held.items() if n not in renamed}
        before.update({renamed[n]: v for n, v in held.items() if n in renamed})
        names = list(change.after) if moved is not None else change.attributes
        for name in names:
            if name in renamed and name not in kind.attributes:
                continue  # the old name of a moved value
            value, was = change.after.get(name), before.get(name)
            if value == was:
                continue
            attribute = kind.attributes.get(name)
            derived = attribute is not None and attribute.derived is not None
            sample = {"ref": change.ref, "attribute": name, "before": was, "after": value}
            out.append(("derived" if derived else "counts", f"{change.name}.{name}", sample))
        return out

    def _link_contributions(self, change: Change, schema: DomainSchema) -> list[Contribution]:
        if change.after is None or change.name not in schema.relations:
            return []
        from_key, _, to_key = change.key.partition("->")
        moved = self.moved_links.get((change.name, from_key, to_key))  # a renamed Relation's: moved as is
        before = moved.values if moved is not None else (change.before or {})
        out: list[Contribution] = []
        for name in list(change.after) if moved is not None else change.attributes:
            value, was = change.after.get(name), before.get(name)
            if value != was:
                sample = {"ref": change.ref, "attribute": name, "before": was, "after": value}
                out.append(("counts", f"{change.name}.{name}", sample))
        return out

    def _moved(
        self, values: dict[str, Any], kept: dict[str, Any], change: Change, revision: str
    ) -> dict[str, Any]:
        """The provenance of a moved row: each value as it was keeps its entry (under its new name);
        a value the migration wrote names this Revision."""
        source = self.sources.get((change.entity, change.name), change.name)
        renamed = self.renamed.get(change.name, {}) if change.entity == "record" else {}
        old_names = {new: old for old, new in renamed.items()}
        out: dict[str, Any] = {}
        for name, value in (change.after or {}).items():
            old = old_names.get(name, name)
            entry = kept.get(old)
            out[name] = entry if entry is not None and values.get(old) == value else revision
        for note in ("$via", "$evidence"):
            if kept.get(note):
                out[note] = kept[note]
        out["$renamed_from"] = source
        return out


Progress = Callable[[str, int, int], Awaitable[None]]

# One value a change writes: ("counts" or "derived", "Kind.Attribute", its sample entry).
Contribution = tuple[str, str, dict[str, Any]]


@dataclass
class Writes:
    """A change set's `writes` summed up change by change, keeping the first `keep` samples of each
    kind (more than SAMPLE when a catch-up may take some back: `remove`)."""

    keep: int = SAMPLE
    counts: dict[str, int] = field(default_factory=dict)
    derived: dict[str, int] = field(default_factory=dict)
    sample: list[dict[str, Any]] = field(default_factory=list)
    derived_sample: list[dict[str, Any]] = field(default_factory=list)

    def add(self, bucket: str, label: str, sample: dict[str, Any]) -> None:
        counts, samples = (
            (self.derived, self.derived_sample) if bucket == "derived" else (self.counts, self.sample)
        )
        counts[label] = counts.get(label, 0) + 1
        if len(samples) < self.keep:
            samples.append(sample)

    def copy(self) -> Writes:
        return Writes(
            self.keep, dict(self.counts), dict(self.derived), list(self.sample), list(self.derived_sample)
        )

    def remove(self, contributions: list[Any]) -> None:
        """Take back what changes counted (those a catch-up migrated again): Contributions, or
        their JSON (lists)."""
        refs: set[str] = set()
        for bucket, label, sample in contributions:
            counts = self.derived if bucket == "derived" else self.counts
            counts[label] -= 1
            if not counts[label]:
                del counts[label]
            refs.add(sample["ref"])
        self.sample = [s for s in self.sample if s["ref"] not in refs]
        self.derived_sample = [s for s in self.derived_sample if s["ref"] not in refs]

    def document(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "derived": dict(self.derived),
            "sample": self.sample[:SAMPLE],
            "derived_sample": self.derived_sample[:SAMPLE],
        }


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
            await _check_shape(migration, view, changed, every)
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


async def _check_shape(
    migration: Migration, view: BranchView, relation: Relation, pairs: list[tuple[str, str]]
) -> None:
    """A violation per Record with more Links than the Relation's cardinality allows, and per `from`
    Record without one when it is required_from (no value to clear: fix the Links first)."""
    many_from = relation.cardinality in ("many_to_one", "one_to_one")
    many_to = relation.cardinality in ("one_to_many", "one_to_one")
    ends = (
        (0, relation.from_kind, relation.to_kind, many_from),
        (1, relation.to_kind, relation.from_kind, many_to),
    )
    for index, kind, other, single in ends:
        if not single:
            continue
        counts: dict[str, int] = {}
        for pair in pairs:
            await migration.changes.pacer.step()
            counts[pair[index]] = counts.get(pair[index], 0) + 1
        for key, count in sorted(counts.items()):
            if count > 1:
                migration.violate(
                    record=f"{kind}/{key}",
                    path=f"{kind}/{key}.{relation.name}",
                    rule="link.cardinality",
                    message=f"{relation.name} becomes {relation.cardinality}: {key} may link to one "
                    f"{other} only and has {count} Links; delete the others first",
                )
    if relation.required_from:
        linked = {from_key for from_key, _ in pairs}
        for key in await view.keys_of_kind(relation.from_kind):
            if key not in linked:
                migration.violate(
                    record=f"{relation.from_kind}/{key}",
                    path=f"{relation.from_kind}/{key}.{relation.name}",
                    rule="link.required",
                    message=f"{relation.name} becomes required_from: {key} has no such Link; add one first",
                )


async def check_unique(
    migration: Migration,
    held: dict[str, dict[str, dict[Any, list[str]]]],
    only: dict[str, set[str]] | None = None,
) -> None:
    """A violation for each Record whose unique value another Record of its Kind holds too, by
    `held` (Kind -> Attribute -> value -> keys); with `only`, for those keys of each Kind alone."""
    for kind_name, attributes in held.items():
        wanted = None if only is None else only.get(kind_name, set())
        for name, holders in attributes.items():
            for value, held_by in holders.items():
                await migration.changes.pacer.step()
                if len(held_by) < 2:
                    continue
                for key in held_by:
                    if wanted is not None and key not in wanted:
                        continue
                    migration.violate(
                        record=f"{kind_name}/{key}",
                        path=f"{kind_name}/{key}.{name}",
                        rule="value.unique",
                        message=f"{name} must be unique on {kind_name}; {value!r} is also held by "
                        f"{', '.join(k for k in held_by if k != key)}",
                    )


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
