"""A three-way merge at Attribute level against the merge base, when both sides moved.

An Attribute changed on one side only takes that side's value; changed on both sides to different
values it is a Conflict (`both_changed`), as is a delete against a change (`delete_vs_change`). The
merged state is then checked for Links whose end the other side deleted, for unique values held
twice and for required values left out (conflicts.py). Conflicts resolved earlier (same
fingerprint) apply their resolution; any other stops the merge and leaves both branches unchanged. Otherwise the target gets
one merge Revision with two parents, whose values brought over name it in `$via`
(provenance.py).
"""

from __future__ import annotations

from typing import Any

from lorebase_keeper.merge.attempt import Found, MergeRequest, MergeResult, add_task_events
from lorebase_keeper.merge.base import Ref, Side, current_values, prefetch
from lorebase_keeper.merge.conflicts import (
    link_end_conflicts,
    required_value_conflicts,
    unique_value_conflicts,
)
from lorebase_keeper.merge.provenance import via_note, via_provenance
from lorebase_keeper.writes import BranchView, Change, Head, Origin, diff_change, open_view, plan_commit
from lorebase_store import BranchRow, CommitRows, Txn


async def three_way_merge(
    txn: Txn, request: MergeRequest, source: BranchRow, target: BranchRow, s_side: Side, t_side: Side
) -> MergeResult:
    domain = request.domain
    view = await open_view(txn, target)
    found: list[Found] = []
    resolved = 0
    results: dict[Ref, dict[str, Any] | None] = {}
    current: dict[Ref, dict[str, Any] | None] = {}
    taken: dict[Ref, dict[str, dict[str, Any]]] = {}  # Attributes brought over: their provenance note
    await prefetch(view, s_side.rows)

    for ref in s_side.rows:
        entity, name, key = ref
        ours = await current_values(view, ref)
        current[ref] = ours
        theirs = s_side.final(ref)
        s_changed = s_side.changed(ref)
        t_changed = t_side.changed(ref) if ref in t_side.rows else set()
        t_touched = ref in t_side.rows
        if theirs is None and ours is None:
            results[ref] = None
            continue
        if theirs is None or ours is None:
            # One side deleted (or never had) it: a conflict when the other side changed it.
            if theirs is None:
                clash = t_touched and bool(t_changed)
            else:
                clash = t_touched and bool(s_changed)
            if clash:
                conflict = Found("delete_vs_change", entity, name, key, None, ours, theirs, s_side.base(ref))
                resolution = request.resolutions.get(conflict.fingerprint)
                if resolution is None:
                    found.append(conflict)
                    continue
                resolved += 1
                results[ref] = ours if resolution["choice"] == "ours" else theirs
                if resolution["choice"] != "ours" and theirs is not None:
                    taken[ref] = {a: via_note(request, resolution) for a in theirs}
            elif theirs is None:
                results[ref] = None
            elif t_touched:  # deleted here, and the source changed nothing of it
                results[ref] = None
            else:  # created by the source
                results[ref] = theirs
                taken[ref] = {a: via_note(request) for a in theirs}
            continue
        merged = dict(ours)
        notes: dict[str, dict[str, Any]] = {}
        s_base = s_side.base(ref) or {}
        # The target changed an Attribute when it differs from the base: the source where the last
        # merge took it (or the fork), so a change the target made before that merge, which the
        # source never saw, still counts.
        t_changed |= {a for a in s_changed if ours.get(a) != s_base.get(a)}
        for attribute in sorted(s_changed):
            value = theirs.get(attribute)
            if attribute in t_changed and ours.get(attribute) != value:
                base = s_base.get(attribute)
                conflict = Found(
                    "both_changed", entity, name, key, attribute, ours.get(attribute), value, base
                )
                resolution = request.resolutions.get(conflict.fingerprint)
                if resolution is None:
                    found.append(conflict)
                    continue
                resolved += 1
                choice = resolution["choice"]
                if choice == "ours":
                    continue
                value = value if choice == "theirs" else resolution.get("value")
                notes[attribute] = via_note(request, resolution)
            elif attribute not in t_changed:
                notes[attribute] = via_note(request)
            if value is None:
                merged.pop(attribute, None)
            else:
                merged[attribute] = value
        results[ref] = merged
        taken[ref] = notes

    found += await link_end_conflicts(view, s_side, t_side, results, request)
    found += await unique_value_conflicts(view, domain, results, taken, request)
    found += await required_value_conflicts(view, domain, results, taken, request)
    if found:
        return MergeResult("conflicts", target.head, target.generation, found, resolved, 0)

    changes: list[Change] = []
    for ref, after in sorted(results.items()):
        entity, name, key = ref
        # Refs a resolution added (a Link dropped, an end Record kept) were not read above.
        before = current[ref] if ref in current else await current_values(view, ref)
        current[ref] = before
        change = diff_change(entity, name, key, before, after)
        if change is not None:
            changes.append(change)
    head = Head(target.head, target.generation, target.schema_digest)
    rows = CommitRows(domain.id, target.name)
    stored = await _stored(view, changes)
    s_provenance = {ref: s_side.provenance(ref) for ref in results if ref in s_side.rows}

    provenance_of = via_provenance(taken, s_provenance)

    committed = plan_commit(
        rows,
        domain=domain.name,
        head=head,
        changes=changes,
        author=request.author,
        message=request.message,
        origin=Origin("merge", request.proposal or request.source, request.author),
        at=request.at,
        stored=stored,
        changed_keys_max=domain.settings.model.agents.feed.changed_keys_max,
        parents=[p for p in (target.head, source.head) if p],
        provenance_of=provenance_of,
    )
    new_generation = committed.revision.generation
    add_task_events(rows, request, committed.revision.id, new_generation, fast_forward=False)
    rows.heads.append({"head": committed.revision.id, "generation": new_generation})
    if target.mode == "overlay":
        rows.records, rows.deleted_records, rows.links, rows.deleted_links = [], [], [], []
    await txn.write_commit_rows(rows)
    await txn.set_last_merge(
        domain.id, source.name, target.name, source.generation, new_generation, request.at
    )
    return MergeResult("merge", committed.revision.id, new_generation, [], resolved, len(changes))


async def _stored(view: BranchView, changes: list[Change]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    records: dict[Any, Any] = {}
    links: dict[Any, Any] = {}
    for change in changes:
        if change.entity == "record":
            row = (await view.get_records(change.name, [change.key])).get(change.key)
            if row is not None:
                records[(change.name, change.key)] = row
        else:
            from_key, _, to_key = change.key.partition("->")
            link = (await view.get_links(change.name, [(from_key, to_key)])).get((from_key, to_key))
            if link is not None:
                links[(change.name, from_key, to_key)] = link
    return records, links


__all__ = ["three_way_merge"]
