"""The catch-up of a staged migration at its commit, under the branch's lock (`catch_up`): what the
commits since its head changed of the Kinds and Relations it migrates, migrated again and its
staged rows replaced; or 409 schema-migration-moved (`moved`) when that cannot be done."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lorebase.problems import Problem
from lorebase.schema.changes import Plan
from lorebase_keeper.schema_changes.migrate import (
    Checked,
    Scope,
    check_unique,
    migrate,
)
from lorebase_keeper.schema_changes.staged.result import Staged
from lorebase_keeper.schema_changes.staged.staging import (
    Ref,
    commit_changes,
    counted,
    planned_rows,
    ref_of,
    source_of,
    stored_before,
)
from lorebase_keeper.writes import (
    BranchView,
    Change,
    ChangeDigest,
    Head,
    Pacer,
)
from lorebase_store import BranchRow
from lorebase_store.chains import branch_chain


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
    changed_keys_max: int,
) -> Staged:
    """`staged` brought from its head to `head` (the branch's, under its lock): what the commits in
    between changed of the migrated Kinds and Relations, migrated again from `head`, its staged
    rows replaced."""
    assert staged.staging is not None
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
        return replace(staged, head=head)
    if len(refs) > limit:
        raise moved(
            row.name,
            f"{len(refs)} Records and Links of the Kinds and Relations it migrates "
            f"changed meanwhile, more than keeper.schema_changes.catch_up_max ({limit})",
        )
    pacer = Pacer()  # under the lock: yields, never sleeps
    fresh = await migrate(view, plan, on_invalid, batch=batch, scope=scope, pacer=pacer)
    held = _held_without(staged.migration, refs)
    for kind_name, attributes in fresh.unique.items():
        for name, holders in attributes.items():
            target = held.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                target.setdefault(value, []).extend(keys)
    again = {
        kind_name: {key for entity, name, key in refs if entity == "record" and name == source}
        for kind_name in fresh.unique
        for source in [source_of(fresh, "record", kind_name)]
    }
    await check_unique(fresh, held, again)
    changes = await commit_changes(fresh, pacer)
    if fresh.violation_count:
        return replace(staged, head=head, migration=fresh)
    strays = sorted(f"{c.name}/{c.key}" for c in changes if ref_of(fresh, c) not in refs)
    if strays:
        raise moved(row.name, f"the writes meanwhile change what it derives for {', '.join(strays[:5])}")
    # The staged rows of the refs migrated again, under their names before and after the change set.
    names: dict[tuple[str, str], set[str]] = {}
    for (entity, new), old in staged.migration.sources.items():
        names.setdefault((entity, old), set()).add(new)
    wanted = [
        (entity, name, key)
        for entity, source, key in sorted(refs)
        for name in sorted({source} | names.get((entity, source), set()))
    ]
    values = staged.values
    records = [(name, key) for entity, name, key in wanted if entity == "record"]
    if values is not None:  # the value counts without the share of the rows replaced
        values = await values.caught_up(view.txn, staged.staging, records, -1)
    dropped = await view.txn.drop_staged_rows(staged.staging, wanted)
    written = staged.written.copy()
    written.remove([entry for _, _, _, entries in dropped for entry in entries or []])
    gone = {ref_of(staged.migration, Change(e, n, k, "", [], None, None)) for e, n, k, _ in dropped}
    counts = dict(staged.counts)
    for entity, _, _ in gone:
        label = "records" if entity == "record" else "links"
        counts[label] -= 1
    caught = replace(staged, head=head, migration=fresh, written=written)
    fresh_refs: set[Ref] = set()
    stored = await stored_before(fresh, pacer)
    rows = await planned_rows(caught, fresh, changes, stored, plan.schema, None, fresh_refs, pacer)
    await view.txn.stage_rows(row.domain_id, row.name, rows)
    if values is not None:  # and with the share of the rows replacing them
        values = await values.caught_up(view.txn, staged.staging, records, 1)
        values = replace(values, named=values.named | caught.named)
    for label, count in (await counted(fresh_refs, pacer)).items():
        counts[label] = counts.get(label, 0) + count
    digest = ChangeDigest(changed_keys_max)
    async for entity, name, key, entry in view.txn.staged_elements(staged.staging):
        digest.add(entity, name, key, entry)
        await pacer.step()
    return replace(
        staged,
        head=head,
        summary=digest.done(),
        count=staged.count - len(dropped) + len(rows),
        counts=counts,
        written=written,
        caught_up=staged.caught_up + len(refs),
        cleared_meanwhile=staged.cleared_meanwhile + fresh.cleared,
        values=values,
    )


def moved(branch: str, why: str) -> Problem:
    return Problem(
        409,
        "schema-migration-moved",
        f"branch {branch!r} moved while the change set's migration ran and it could not be brought "
        f"up to date: {why}; nothing changed, send the change set again",
        branch=branch,
    )


def _held_without(migration: Checked, refs: set[Ref]) -> dict[str, dict[str, dict[Any, list[str]]]]:
    """The staged unique values, without those of the Records migrated again."""
    out: dict[str, dict[str, dict[Any, list[str]]]] = {}
    for kind_name, attributes in migration.unique.items():
        source = source_of(migration, "record", kind_name)
        for name, holders in attributes.items():
            kept = out.setdefault(kind_name, {}).setdefault(name, {})
            for value, keys in holders.items():
                left = [k for k in keys if ("record", source, k) not in refs]
                if left:
                    kept[value] = left
    return out
