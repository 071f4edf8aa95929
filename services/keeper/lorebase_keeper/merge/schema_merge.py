"""A three-way merge across schema changes: the schemas merged element by element, and each side's
data changes brought into the schema the merge commits under.

When either side committed a schema change set since the merge base (origin `schema`; the change
sets are kept by migration 0019), the merge

1. replays each side's change sets from the base's schema and merges the two results element by
   element (lorebase.schema.merge): an element both sides changed differently is a Conflict
   (`schema_conflict`, entity `schema`, named by the element: `Supplier.tier`, `relation:flags`),
   resolved with `ours` or `theirs` like any other;
2. needs every change set of the source on the target too (the target then stands on the merged
   schema): the ones it has not are committed on the target first, each as a change set's schema
   Revision migrating the target's data (MergeRequest.catch_up; lorebase_keeper.schema_changes
   .catch_up), and the merge starts again; without a catch-up it answers 409 `schema-conflict`
   listing the changes to apply to the target first. A Proposal's merge that is kept has the first
   of them staged before its transaction, outside the locks (merges.py `change_sets_to_catch_up`
   tells which), so its catch-up only brings that staging up to the target's head;
3. migrates each side's data changes into the target's schema: a history row is put through the
   target's change sets it had not seen (renamed Kinds, Relations and Attributes, removed ones,
   split and merged ones, conversions through their `map`, backfills of the Records the side
   created), and the rows of the
   change sets themselves are left out (each side migrated its own data; the target's migration
   is already on the target). What lands is checked as a write of it on the target would be
   (validate_values): a converted value by its new rules, a created Record or Link whole, a changed
   Link's changed values. A value that does not convert or fit, a Record of a Kind the target
   removed or a created Record or Link the target's schema refuses is a Conflict
   (`schema_migration`) saying why, with the rule and the branch to change the value on.

Then the usual three-way merge (three_way_merge.py) runs over the migrated changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value
from lorebase.problems import Problem
from lorebase.schema import DomainSchema, Issue, Relation, load_schema, validate_values
from lorebase.schema.changes import Plan, SchemaChangeError, apply_changes
from lorebase.schema.merge import ElementConflict, Renames, merge_documents
from lorebase_keeper.merge.attempt import Found, MergeRequest
from lorebase_keeper.merge.base import Ref, Side, change_set_digest
from lorebase_store import BranchChain, HistoryRow, RevisionRow, Txn


@dataclass(frozen=True)
class Step:
    """One change set: its Revision, the digest of its changes, the changes, and their plan replayed
    on the schema before it."""

    revision: RevisionRow
    digest: str
    items: list[dict[str, Any]]
    plan: Plan


@dataclass
class ChangeSets:
    """One side's change sets since the merge base, oldest first."""

    steps: list[Step] = field(default_factory=list)

    @property
    def digests(self) -> list[str]:
        return [step.digest for step in self.steps]

    def renames(self, base: dict[str, Any]) -> Renames:
        """What the change sets renamed, composed: base name -> name at the end."""
        kinds = {name: name for name in base.get("kinds") or {}}
        relations = {name: name for name in base.get("relations") or {}}
        traits = {name: name for name in base.get("traits") or {}}
        attributes = {
            (kind, attribute): (kind, attribute)
            for kind, definition in (base.get("kinds") or {}).items()
            for attribute in definition.get("attributes") or {}
        }
        for one in self.steps:
            step = one.plan.renames()
            kinds = {b: step.kinds.get(now, now) for b, now in kinds.items()}
            relations = {b: step.relations.get(now, now) for b, now in relations.items()}
            traits = {b: step.traits.get(now, now) for b, now in traits.items()}
            attributes = {
                b: (step.kinds.get(kind, kind), step.attributes.get((kind, attribute), attribute))
                for b, (kind, attribute) in attributes.items()
            }
        return Renames(
            {b: n for b, n in kinds.items() if b != n},
            {b: n for b, n in relations.items() if b != n},
            {b: now[1] for b, now in attributes.items() if b[1] != now[1]},
            {b: n for b, n in traits.items() if b != n},
        )


@dataclass
class SchemaMerge:
    base: dict[str, Any]
    source: ChangeSets
    target: ChangeSets
    target_document: dict[str, Any]
    source_document: dict[str, Any]


async def schema_merge(
    txn: Txn,
    request: MergeRequest,
    s_chain: BranchChain,
    s_base: int,
    t_chain: BranchChain,
    t_base: int,
    *,
    same_schema: bool,
) -> SchemaMerge | None:
    """Each side's change sets since the base, replayed; None when neither side changed the schema."""
    domain = request.domain
    s_revisions = await txn.schema_revisions(domain.id, s_chain, after=s_base)
    t_revisions = await txn.schema_revisions(domain.id, t_chain, after=t_base)
    if not s_revisions and not t_revisions:
        return None
    kept = await txn.schema_change_sets(domain.id, [r.id for r in (*s_revisions, *t_revisions)])
    missing = [r.id for r in (*s_revisions, *t_revisions) if r.id not in kept]
    if missing:
        if same_schema:  # as before migration 0019: both on one version, the values merge as they are
            return None
        raise _refused(
            request,
            f"the change sets of {', '.join(m[:12] for m in missing)} were committed before keeper kept "
            "change sets (migration 0019), so their migration cannot be replayed",
        )
    first = (s_revisions or t_revisions)[0]
    parent = await txn.get_revision(domain.id, first.parents[0]) if first.parents else None
    base = await txn.schema_document(domain.row, None if parent is None else parent.schema_digest)
    sides = []
    for revisions in (s_revisions, t_revisions):
        document, steps = base, ChangeSets()
        for revision in revisions:
            items = kept[revision.id]
            try:
                plan = apply_changes(document, items)
            except SchemaChangeError as error:
                raise _refused(
                    request,
                    f"the change set of {revision.id[:12]} does not replay on the schema before it: {error}",
                ) from None
            steps.steps.append(Step(revision, change_set_digest(items), items, plan))
            document = plan.schema.document
        sides.append((document, steps))
    (s_document, source), (t_document, target) = sides
    return SchemaMerge(base, source, target, t_document, s_document)


def schema_conflicts(merge: SchemaMerge, request: MergeRequest) -> tuple[list[Found], int, set[str]]:
    """The elements both sides changed differently, how many of them a stored resolution settles,
    and the elements it settles. A resolution takes the source's change (`theirs`: the catch-up
    applies the source's change sets to the target's version of the element); after the catch-up
    the target's version is that one, so an element settled before it (`request.settled`) is taken
    as the target now has it, whatever it differs by."""
    resolved = 0
    settled: set[str] = set()

    def resolve(conflict: ElementConflict) -> str | None:
        nonlocal resolved
        if conflict.element in request.settled:  # counted by the pass that settled it
            return "ours"
        resolution = request.resolutions.get(_found(conflict).fingerprint)
        if resolution is None:
            return None
        resolved += 1
        settled.add(conflict.element)
        return str(resolution.get("choice"))

    _, conflicts = merge_documents(
        merge.base,
        merge.target_document,
        merge.source_document,
        ours_renames=merge.target.renames(merge.base),
        theirs_renames=merge.source.renames(merge.base),
        resolve=resolve,
    )
    return [_found(c) for c in conflicts], resolved, settled


def _found(conflict: ElementConflict) -> Found:
    return Found(
        "schema_conflict", "schema", conflict.element, "", None, conflict.ours, conflict.theirs, conflict.base
    )


def source_changes_not_on_target(merge: SchemaMerge, request: MergeRequest) -> list[Step]:
    """The source's change sets the target has not, oldest first; without a catch-up (see
    MergeRequest) they answer 409 schema-conflict listing the changes to apply to the target."""
    on_target = set(merge.target.digests)
    unseen = [step for step in merge.source.steps if step.digest not in on_target]
    if not unseen or request.catch_up is not None:
        return unseen
    changes = [dict(item) for step in unseen for item in step.items]
    raise Problem(
        409,
        "schema-conflict",
        f"{request.source} changed the schema in ways {request.target} has not (Revisions "
        f"{', '.join(step.revision.id[:12] for step in unseen)}); their migration runs on {request.target}'s data as a "
        f"change set: POST /branches/{request.target}/schema/changes with `changes` (in this answer), "
        "then merge again",
        source=request.source,
        target=request.target,
        changes=changes,
    )


def migrate_side(
    merge: SchemaMerge, rows: list[HistoryRow], side: str, request: MergeRequest
) -> tuple[Side, list[Found], int]:
    """One side's history rows in the target's schema (see the module's docstring), the Conflicts
    of what does not fit, and how many of those a stored resolution settled: a source's Record or
    Link resolved with `ours` has its changes left out (the target keeps it as it is)."""
    own = merge.source if side == "source" else merge.target
    own_ids = {step.revision.id for step in own.steps}
    final = merge.target.steps[-1].plan.schema if merge.target.steps else load_schema(merge.target_document)
    out = Side()
    found: list[Found] = []
    failed: set[Ref] = set()
    # A value that does not convert matters where it lands: in the side's last change of the entity
    # (a value it changed again later, or held before, is no Conflict).
    last_change = {(row.entity, row.name, row.key): index for index, row in enumerate(rows)}
    landed: set[Ref] = set()  # the entities whose last change was migrated here
    named: dict[Ref, Ref] = {}  # an entity's ref on the side -> in the target's schema
    for index, row in enumerate(rows):
        if row.revision in own_ids:
            continue  # a change set's own migration
        seen = {step.digest for step in own.steps if step.revision.generation < row.generation}
        plans = [step.plan for step in merge.target.steps if step.digest not in seen]
        ref = (row.entity, row.name, row.key)
        migrated, why = _migrate_row(row, plans, final)
        if migrated is None or (why[1] and last_change[ref] == index):
            if ref not in failed:
                failed.add(ref)
                found.append(_unfit(ref, why, side, request))
        elif last_change[ref] == index and plans:
            landed.add((migrated.entity, migrated.name, migrated.key))
        if migrated is not None:
            out.add(migrated)
            named[ref] = (migrated.entity, migrated.name, migrated.key)
    for ref in sorted(landed):
        issue = _write_issue(out, ref, final)
        if issue is not None:
            found.append(
                _unfit(
                    ref,
                    (issue.path.rsplit(".", 1)[-1], f"{issue.message} (rule {issue.rule})"),
                    side,
                    request,
                )
            )
    if side != "source":
        return out, found, 0
    unsettled = []
    for conflict in found:
        if (request.resolutions.get(conflict.fingerprint) or {}).get("choice") == "ours":
            ref = (conflict.entity, conflict.name, conflict.key)
            out.rows.pop(named.get(ref, ref), None)
        else:
            unsettled.append(conflict)
    return out, unsettled, len(found) - len(unsettled)


def _write_issue(side: Side, ref: Ref, final: DomainSchema) -> Issue | None:
    """The first rule of the target's schema that a side's migrated Record or Link breaks, checked
    as a write of it would be (validate_values, as an Operation's edit or an import is): a created
    one whole (a required value it lacks counts), a changed one by the values the side changed (what
    the three-way merge brings over; a required one it cleared counts). A changed Record's required
    values are left to the three-way merge (`required_missing`, resolvable there)."""
    entity, name, key = ref
    history = side.rows[ref]
    last = history[-1]
    if last.change == "deleted":
        return None
    owner = final.kinds.get(name) if entity == "record" else final.relations.get(name)
    if owner is None:
        return None
    values = dict(last.after or {})
    created = history[0].change == "created"
    if not created:
        if entity == "record":
            return None  # its converted values were checked on the way (_migrate_row)
        values = {a: values.get(a) for a in side.changed(ref) if a in owner.attributes}
    _, issues = validate_values(
        owner.attributes, values, path=f"{name}/{key}", partial=not created, stored=True
    )
    return issues[0] if issues else None


def _unfit(ref: Ref, why: tuple[str | None, str], side: str, request: MergeRequest) -> Found:
    """A `schema_migration` Conflict: the Record or Link, the Attribute, and why (with the rule it
    breaks and what to change, when a value is the reason)."""
    entity, name, key = ref
    reason = why[1]
    if why[0] is not None:
        branch = request.source if side == "source" else request.target
        reason = f"{reason} in the schema of {request.target}; change the value on {branch}, then merge again"
    # The source's changes of it may be left out (`ours`); the target's are its own data.
    takes = ("ours",) if side == "source" else ()
    return Found("schema_migration", entity, name, key, why[0], None, reason, None, takes)


def _migrate_row(
    row: HistoryRow, plans: list[Plan], final: DomainSchema
) -> tuple[HistoryRow | None, tuple[str | None, str]]:
    """The row in the schema after `plans`, and why a value of its `after` did not convert (such a
    value, or one of its `before`, stays as it was); None: the Kind or Relation was removed. A value
    is judged by the schema it lands in (`final`, the target's after the merge's catch-up): one that
    a change set on the way refuses but the final Attribute of that name takes is converted by the
    final one (the target narrowed a bound that a later change set, such as the source's own taken
    with a `theirs` resolution, widened again)."""
    failure: tuple[str | None, str] = (None, "")
    for plan in plans:
        if row.entity == "link":
            if row.name in plan.removed_relations:
                return None, (None, f"Relation {row.name} was removed on the target")
            row = replace(row, name=plan.renamed_relations.get(row.name, row.name))
            relation = plan.schema.relations.get(row.name)
            if relation is not None and "attributes" in plan.changed_relations.get(row.name, []):
                row, unconverted = _migrate_link_values(row, relation, plan.link_maps.get(row.name, {}))
                if unconverted[1] and not failure[1]:
                    failure = unconverted
            continue
        if row.name in plan.removed_kinds:
            return None, (None, f"Kind {row.name} was removed on the target")
        name = plan.renamed_kinds.get(row.name, row.name)
        migration = plan.kinds.get(name)
        kind = plan.schema.kinds.get(name)
        if migration is None or kind is None:
            row = replace(row, name=name)
            continue
        sides: list[dict[str, Any] | None] = []
        for values in (row.before, row.after):
            if values is None:
                sides.append(None)
                continue
            moved = migration.migrate(values)
            for attribute, (_, why) in migration.compute(kind, values, moved).items():
                if values is row.after and not failure[1]:
                    failure = (attribute, why)
            for attribute, value_map in migration.converted.items():
                value = moved.get(attribute)
                if value is None:
                    continue
                mapped = value_map.get(canonical_text(value), value) if value_map else value
                try:
                    moved[attribute] = canonical_value(kind.attributes[attribute], mapped)
                except ValueProblem as problem:
                    landing = final.kinds.get(name)
                    if landing is not None and attribute in landing.attributes:
                        try:
                            moved[attribute] = canonical_value(landing.attributes[attribute], mapped)
                            continue
                        except ValueProblem:
                            pass
                    if values is row.after and not failure[1]:
                        failure = (attribute, _unconverted(value, problem.rule, problem.message))
            sides.append(moved)
        before, after = sides
        if after is not None and row.change == "created":
            for attribute, backfill in migration.backfills.items():
                if after.get(attribute) is None:
                    value = backfill.evaluate(after)
                    if value is not None:
                        after[attribute] = value
        attributes = [migration.renamed.get(a, a) for a in row.attributes if a not in migration.removed]
        attributes += [
            name
            for name, computed in migration.computed.items()
            if any(old in row.attributes for _, old in computed.reads) and name not in attributes
        ]
        if row.change == "created" and after is not None:
            attributes = list(after)
        row = replace(row, name=name, before=before, after=after, attributes=attributes)
    return row, failure


def _migrate_link_values(
    row: HistoryRow, relation: Relation, maps: dict[str, dict[str, Any]]
) -> tuple[HistoryRow, tuple[str | None, str]]:
    """A Link's row without the values of link Attributes the target's change dropped, the others
    converted as the change converted the target's Links (through its `map`, then checked as a write
    of the Link is: its new type, bounds, enum values, pattern, length); and why a value of its
    `after` did not convert or fit (such a value stays as it was)."""
    failure: tuple[str | None, str] = (None, "")

    def convert(values: dict[str, Any] | None, side_of_after: bool) -> dict[str, Any] | None:
        nonlocal failure
        if values is None:
            return None
        out = {n: v for n, v in values.items() if n in relation.attributes}
        mapped = {
            name: maps[name].get(canonical_text(value), value) if maps.get(name) else value
            for name, value in out.items()
        }
        converted, issues = validate_values(relation.attributes, mapped, path="", partial=True, stored=True)
        for issue in issues:
            if side_of_after and not failure[1]:
                failure = (issue.path, _unconverted(out.get(issue.path), issue.rule, issue.message))
        return {**out, **converted}

    migrated = replace(
        row,
        before=convert(row.before, False),
        after=convert(row.after, True),
        attributes=[a for a in row.attributes if a in relation.attributes],
    )
    return migrated, failure


def _unconverted(value: Any, rule: str, message: str) -> str:
    """Why a value does not come through a change: not of the new type, or breaking one of its rules."""
    how = "does not convert" if rule == "value.type" else "does not fit"
    return f"{value!r} {how}: {message} (rule {rule})"


def _refused(request: MergeRequest, why: str) -> Problem:
    return Problem(
        409,
        "schema-conflict",
        f"{request.source} and {request.target} stand on different schemas and {why}; apply the same "
        f"change set to {request.source} (POST /branches/{request.source}/schema/changes), then merge",
        source=request.source,
        target=request.target,
    )


__all__ = [
    "SchemaMerge",
    "Step",
    "migrate_side",
    "source_changes_not_on_target",
    "schema_conflicts",
    "schema_merge",
]
