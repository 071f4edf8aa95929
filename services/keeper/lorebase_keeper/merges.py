"""Merging one branch into another: a fast-forward when the target has not moved, else a three-way
merge at Attribute level against the merge base, in one transaction that locks both branches.

The merge base is the newest Revision both first-parent histories share, or where the last merge of
the source into the target stood (`branch_merges`), whichever is newer. What each side changed since
the base comes from its history rows: an Attribute changed on one side only takes that side's value;
changed on both sides to different values it is a Conflict (`both_changed`), as are a delete against
a change (`delete_vs_change`), a Link whose end the other side deleted (`link_end_deleted`) and a
unique value taken on both sides (`unique_taken`). Conflicts resolved earlier (same fingerprint)
apply their resolution; any other stops the merge and is stored for the Proposal.

A value brought over keeps its provenance (the Revision of the source that set it) and names the
Revision that brought it in `$via` (the merge Revision, and the Proposal and resolution when there
is one). A fast-forward moves the target onto the source's Revisions: its history then runs through
the source's segment, and lineage names the source Revision itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase_keeper.branch_view import BranchView, open_view
from lorebase_keeper.changes import Change, diff_change, link_key
from lorebase_keeper.commit import Head, Origin, plan_commit
from lorebase_keeper.domains import Domain
from lorebase_keeper.snapshots import branch_chain
from lorebase_store import BranchChain, BranchRow, CommitRows, HistoryRow, Txn

Ref = tuple[str, str, str]  # (entity, Kind or Relation, key)


@dataclass
class Side:
    """What one side changed since the merge base, per entity."""

    rows: dict[Ref, list[HistoryRow]] = field(default_factory=dict)

    def add(self, row: HistoryRow) -> None:
        self.rows.setdefault((row.entity, row.name, row.key), []).append(row)

    def base(self, ref: Ref) -> dict[str, Any] | None:
        """The entity's values at the base, as far as this side's changes tell (None: absent)."""
        first = self.rows[ref][0]
        if first.change == "created":
            return None
        values: dict[str, Any] = {}
        seen: set[str] = set()
        for row in self.rows[ref]:
            for name in row.attributes:
                if name not in seen:
                    seen.add(name)
                    if row.before is not None and row.before.get(name) is not None:
                        values[name] = row.before[name]
        return values

    def final(self, ref: Ref) -> dict[str, Any] | None:
        last = self.rows[ref][-1]
        return None if last.change == "deleted" else dict(last.after or {})

    def provenance(self, ref: Ref) -> dict[str, Any]:
        return dict(self.rows[ref][-1].provenance)

    def changed(self, ref: Ref) -> set[str]:
        """Attributes whose value differs from the base at the end of this side."""
        touched = {name for row in self.rows[ref] for name in row.attributes}
        base = self.base(ref) or {}
        final = self.final(ref) or {}
        return {name for name in touched if base.get(name) != final.get(name)}


@dataclass
class Found:
    """A Conflict found by a merge attempt."""

    code: str
    entity: str
    name: str
    key: str
    attribute: str | None
    ours: Any
    theirs: Any
    base: Any = None

    @property
    def fingerprint(self) -> str:
        return sha256_hex(
            canonical_json(
                [self.code, self.entity, self.name, self.key, self.attribute, self.ours, self.theirs]
            )
        )[:32]

    def row(self, conflict_id: str) -> dict[str, Any]:
        return {
            "id": conflict_id,
            "fingerprint": self.fingerprint,
            "code": self.code,
            "entity": self.entity,
            "name": self.name,
            "key": self.key,
            "attribute": self.attribute,
            "details": {"base": self.base, "ours": self.ours, "theirs": self.theirs},
        }


@dataclass
class MergeResult:
    result: str  # fast_forward | merge | conflicts
    head: str | None  # the target's head after the attempt
    generation: int
    conflicts: list[Found]
    resolved: int
    changes: int


@dataclass(frozen=True)
class MergeRequest:
    domain: Domain
    source: str
    target: str
    author: str
    message: str
    proposal: str | None
    at: datetime
    # The resolutions of Conflicts resolved earlier, by fingerprint.
    resolutions: dict[str, dict[str, Any]]
    # Events to write in the merge transaction (an agent task's deferred operation events).
    events: list[dict[str, Any]] = field(default_factory=list)


async def lock_pair(txn: Txn, domain_id: int, source: str, target: str) -> tuple[BranchRow, BranchRow]:
    """Lock both branches (in name order, so two merges in opposite directions cannot deadlock)."""
    rows: dict[str, BranchRow | None] = {}
    for name in sorted({source, target}):
        rows[name] = await txn.get_branch(domain_id, name, for_update=True)
    for name, what in ((source, "source"), (target, "target")):
        if rows[name] is None:
            raise Problem(404, "not-found", f"unknown {what} branch {name!r}")
    src, tgt = rows[source], rows[target]
    assert src is not None and tgt is not None
    return src, tgt


def _common(source: BranchRow, s_chain: BranchChain, target: BranchRow, t_chain: BranchChain) -> int:
    """The generation of the newest Revision on both histories (-1: none)."""
    best = -1
    for s_name, s_low, s_high in s_chain.segments:
        for t_name, t_low, t_high in t_chain.segments:
            if s_name != t_name:
                continue
            top = min(
                source.generation if s_high is None else s_high,
                target.generation if t_high is None else t_high,
            )
            if top >= max(s_low, t_low):
                best = max(best, top)
    return best


async def _base(
    txn: Txn, domain: Domain, source: BranchRow, target: BranchRow
) -> tuple[BranchChain, BranchChain, int, int, int]:
    """Both histories, their newest shared generation, and the merge base on each side."""
    s_chain = await branch_chain(txn, domain.id, source)
    t_chain = await branch_chain(txn, domain.id, target)
    common = _common(source, s_chain, target, t_chain)
    s_base = t_base = common
    last = await txn.last_merge(domain.id, source.name, target.name)
    if last is not None and last[0] > common and s_chain.holds(source.name, last[0]):
        s_base, t_base = last
    return s_chain, t_chain, common, s_base, t_base


async def touched_kinds(txn: Txn, domain: Domain, source: BranchRow, target: BranchRow) -> list[str]:
    """The Kinds the source changed since the merge base (a Relation counts its two Kinds)."""
    s_chain, _, _, s_base, _ = await _base(txn, domain, source, target)
    kinds: set[str] = set()
    for row in await txn.changes_after(domain.id, s_chain, s_base):
        if row.entity == "record":
            kinds.add(row.name)
        elif (relation := domain.schema.relations.get(row.name)) is not None:
            kinds |= {relation.from_kind, relation.to_kind}
    return sorted(kinds)


async def merge(txn: Txn, request: MergeRequest) -> MergeResult:
    """Merge `request.source` into `request.target` inside `txn`; conflicts leave both unchanged."""
    domain = request.domain
    source, target = await lock_pair(txn, domain.id, request.source, request.target)
    s_chain, t_chain, common, s_base, t_base = await _base(txn, domain, source, target)
    if source.head == target.head or s_base >= source.generation:
        return MergeResult("fast_forward", target.head, target.generation, [], 0, 0)
    s_side = Side()
    for row in await txn.changes_after(domain.id, s_chain, s_base):
        s_side.add(row)
    if t_base >= target.generation and (target.head is None or s_base == common):
        return await _fast_forward(txn, request, source, s_chain, target, s_side)
    t_side = Side()
    for row in await txn.changes_after(domain.id, t_chain, t_base):
        t_side.add(row)
    return await _three_way(txn, request, source, target, s_side, t_side)


async def _fast_forward(
    txn: Txn, request: MergeRequest, source: BranchRow, s_chain: BranchChain, target: BranchRow, s_side: Side
) -> MergeResult:
    """Move the target onto the source's head: its history runs through the source's Revisions."""
    domain = request.domain
    rows = CommitRows(domain.id, target.name)
    if target.mode != "overlay":
        view = await open_view(txn, target)
        await _prefetch(view, s_side.rows)
        for (entity, name, key), changes in s_side.rows.items():
            last = changes[-1]
            if entity == "record":
                stored = (await view.get_records(name, [key])).get(key)
                if last.change == "deleted":
                    if stored is not None:
                        rows.deleted_records.append({"kind": name, "key": key})
                    continue
                created = next((r.revision for r in reversed(changes) if r.change == "created"), None)
                rows.records.append(
                    {
                        "kind": name,
                        "key": key,
                        "values": last.after,
                        "provenance": last.provenance,
                        "created_revision": created or (stored.created_revision if stored else last.revision),
                        "updated_revision": last.revision,
                        "new": stored is None,
                    }
                )
            else:
                from_key, _, to_key = key.partition("->")
                stored_link = (await view.get_links(name, [(from_key, to_key)])).get((from_key, to_key))
                if last.change == "deleted":
                    if stored_link is not None:
                        rows.deleted_links.append({"relation": name, "from_key": from_key, "to_key": to_key})
                    continue
                rows.links.append(
                    {
                        "relation": name,
                        "from_key": from_key,
                        "to_key": to_key,
                        "values": last.after,
                        "provenance": last.provenance,
                        "revision": last.revision,
                        "new": stored_link is None,
                    }
                )
    # The target's followers see each Revision it now holds.
    by_revision: dict[str, list[HistoryRow]] = {}
    for changes in s_side.rows.values():
        for row in changes:
            by_revision.setdefault(row.revision, []).append(row)
    revisions = await txn.get_revisions(domain.id, list(by_revision))
    for revision in sorted(revisions.values(), key=lambda r: r.generation):
        rows.events.append(
            {
                "type": "revision.committed",
                "revision": revision.id,
                "event": _revision_event(domain, target.name, revision, by_revision[revision.id]),
                "created_at": iso(request.at),
            }
        )
    head_generation = source.generation
    _add_events(rows, request, source.head, head_generation)
    rows.heads.append({"head": source.head, "generation": head_generation})
    await txn.write_commit_rows(rows)
    chain = [[target.name, head_generation + 1, None], *s_chain.upto(head_generation).document()]
    await txn.update_branch(domain.id, target.name, chain=chain)
    await txn.set_last_merge(
        domain.id, source.name, target.name, source.generation, head_generation, request.at
    )
    return MergeResult("fast_forward", source.head, head_generation, [], 0, len(s_side.rows))


def _revision_event(domain: Domain, branch: str, revision: Any, changes: list[HistoryRow]) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    keys: dict[str, list[str]] = {}
    for row in changes:
        if row.entity == "record":
            kinds[row.name] = kinds.get(row.name, 0) + 1
            keys.setdefault(row.name, []).append(row.key)
        else:
            relations[row.name] = relations.get(row.name, 0) + 1
    limit = int(domain.settings.get("agents.feed.changed_keys_max", 100))
    truncated = sum(len(v) for v in keys.values()) > limit
    if truncated:
        budget = limit
        capped: dict[str, list[str]] = {}
        for kind, kind_keys in keys.items():
            capped[kind] = kind_keys[: max(budget, 0)]
            budget -= len(capped[kind])
        keys = {k: v for k, v in capped.items() if v}
    return {
        "type": "revision.committed",
        "domain": domain.name,
        "branch": branch,
        "revision": revision.id,
        "parents": revision.parents,
        "generation": revision.generation,
        "author": revision.author,
        "message": revision.message,
        "origin": revision.origin,
        "stats": revision.stats,
        "created_at": iso(revision.created_at),
        "kinds": kinds,
        "relations": relations,
        "schema_changed": False,
        "keys": keys,
        "keys_truncated": truncated,
    }


def _add_events(rows: CommitRows, request: MergeRequest, head: str | None, generation: int) -> None:
    """An agent task's operation events, written once, when its Proposal merges."""
    for doc in request.events:
        event = {
            **doc,
            "branch": request.target,
            "head": head,
            "source_branch": request.source,
            "proposal": request.proposal,
        }
        rows.events.append(
            {"type": doc["type"], "revision": head, "event": event, "created_at": iso(request.at)}
        )


async def _three_way(
    txn: Txn, request: MergeRequest, source: BranchRow, target: BranchRow, s_side: Side, t_side: Side
) -> MergeResult:
    domain = request.domain
    view = await open_view(txn, target)
    found: list[Found] = []
    resolved = 0
    results: dict[Ref, dict[str, Any] | None] = {}
    current: dict[Ref, dict[str, Any] | None] = {}
    taken: dict[Ref, dict[str, dict[str, Any]]] = {}  # Attributes brought over: their provenance note
    await _prefetch(view, s_side.rows)

    for ref in s_side.rows:
        entity, name, key = ref
        ours = await _current(view, ref)
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
                    taken[ref] = {a: _note(request, resolution) for a in theirs}
            elif theirs is None:
                results[ref] = None
            elif t_touched:  # deleted here, and the source changed nothing of it
                results[ref] = None
            else:  # created by the source
                results[ref] = theirs
                taken[ref] = {a: _note(request) for a in theirs}
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
                notes[attribute] = _note(request, resolution)
            elif attribute not in t_changed:
                notes[attribute] = _note(request)
            if value is None:
                merged.pop(attribute, None)
            else:
                merged[attribute] = value
        results[ref] = merged
        taken[ref] = notes

    found += await _link_ends(view, s_side, t_side, results, request)
    found += await _unique_values(view, domain, results, taken, request)
    if found:
        return MergeResult("conflicts", target.head, target.generation, found, resolved, 0)

    changes: list[Change] = []
    for ref, after in sorted(results.items()):
        entity, name, key = ref
        # Refs a resolution added (a Link dropped, an end Record kept) were not read above.
        before = current[ref] if ref in current else await _current(view, ref)
        current[ref] = before
        change = diff_change(entity, name, key, before, after)
        if change is not None:
            changes.append(change)
    head = Head(target.head, target.generation)
    rows = CommitRows(domain.id, target.name)
    stored = await _stored(view, changes)
    s_provenance = {ref: s_side.provenance(ref) for ref in results if ref in s_side.rows}

    def provenance_of(change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        ref = (change.entity, change.name, change.key)
        notes = taken.get(ref) or {}
        if not notes:
            return provenance
        via = dict(provenance.get("$via") or {})
        for attribute, note in notes.items():
            if change.after is None or attribute not in change.after:
                continue
            if "resolution" in note and note["resolution"]["choice"] == "value":
                via[attribute] = {**note, "revision": revision}
                continue
            original = s_provenance.get(ref, {}).get(attribute)
            if original is not None:
                provenance[attribute] = original
            via[attribute] = {**note, "revision": revision}
        if via:
            provenance["$via"] = via
        return provenance

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
        changed_keys_max=int(domain.settings.get("agents.feed.changed_keys_max", 100)),
        parents=[p for p in (target.head, source.head) if p],
        provenance_of=provenance_of,
    )
    new_generation = committed.revision.generation
    _add_events(rows, request, committed.revision.id, new_generation)
    rows.heads.append({"head": committed.revision.id, "generation": new_generation})
    if target.mode == "overlay":
        rows.records, rows.deleted_records, rows.links, rows.deleted_links = [], [], [], []
    await txn.write_commit_rows(rows)
    await txn.set_last_merge(
        domain.id, source.name, target.name, source.generation, new_generation, request.at
    )
    return MergeResult("merge", committed.revision.id, new_generation, [], resolved, len(changes))


def _note(request: MergeRequest, resolution: dict[str, Any] | None = None) -> dict[str, Any]:
    note: dict[str, Any] = {"source_branch": request.source}
    if request.proposal:
        note["proposal"] = request.proposal
    if resolution is not None:
        note["resolution"] = resolution
    return note


async def _prefetch(view: BranchView, refs: Any) -> None:
    """Read the target's side of every entity a merge looks at, one statement per Kind or Relation."""
    records: dict[str, list[str]] = {}
    links: dict[str, list[tuple[str, str]]] = {}
    for entity, name, key in refs:
        if entity == "record":
            records.setdefault(name, []).append(key)
        else:
            from_key, _, to_key = key.partition("->")
            links.setdefault(name, []).append((from_key, to_key))
    for kind, keys in records.items():
        await view.get_records(kind, keys)
    for relation, pairs in links.items():
        await view.get_links(relation, pairs)


async def _current(view: BranchView, ref: Ref) -> dict[str, Any] | None:
    entity, name, key = ref
    if entity == "record":
        row = (await view.get_records(name, [key])).get(key)
        return None if row is None else dict(row.values)
    from_key, _, to_key = key.partition("->")
    link = (await view.get_links(name, [(from_key, to_key)])).get((from_key, to_key))
    return None if link is None else dict(link.values)


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


async def _link_ends(
    view: BranchView,
    s_side: Side,
    t_side: Side,
    results: dict[Ref, dict[str, Any] | None],
    request: MergeRequest,
) -> list[Found]:
    """Links of the merged state whose end Record the other side deleted."""
    found: list[Found] = []
    schema = request.domain.schema
    deleted = {
        (name, key) for (entity, name, key), after in results.items() if entity == "record" and after is None
    }
    deleted |= {
        (ref[1], ref[2])
        for ref in t_side.rows
        if ref[0] == "record" and t_side.final(ref) is None and ref not in s_side.rows
    }
    if not deleted:
        return found

    async def keep_ends(kind_keys: list[tuple[str, str]]) -> None:
        """A Link kept keeps its ends: an end the source deleted stays as the target has it, an end
        the target deleted comes back as it was before."""
        for kind, key in kind_keys:
            ref = ("record", kind, key)
            if (kind, key) not in deleted:
                continue
            if ref in s_side.rows:
                results[ref] = await _current(view, ref)
            elif ref in t_side.rows:
                results[ref] = t_side.rows[ref][-1].before

    for (entity, name, key), after in sorted(results.items()):
        if entity != "link" or after is None:
            continue
        relation = schema.relations.get(name)
        if relation is None:
            continue
        from_key, _, to_key = key.partition("->")
        if (relation.from_kind, from_key) in deleted or (relation.to_kind, to_key) in deleted:
            conflict = Found("link_end_deleted", "link", name, key, None, None, after)
            if conflict.fingerprint in request.resolutions:
                if request.resolutions[conflict.fingerprint]["choice"] == "ours":
                    results[(entity, name, key)] = await _current(view, (entity, name, key))
                else:
                    await keep_ends([(relation.from_kind, from_key), (relation.to_kind, to_key)])
                continue
            found.append(conflict)
    # Links the target holds to Records the source deleted.
    for kind, key in sorted(deleted):
        if ("record", kind, key) not in s_side.rows or s_side.final(("record", kind, key)) is not None:
            continue
        for relation in schema.relations.values():
            ends = []
            if relation.from_kind == kind:
                ends += await view.links_of(relation.name, from_keys=[key])
            if relation.to_kind == kind:
                ends += await view.links_of(relation.name, to_keys=[key])
            for link in ends:
                ref = ("link", relation.name, link_key(link.from_key, link.to_key))
                if ref in results:
                    continue
                conflict = Found(
                    "link_end_deleted", "link", relation.name, ref[2], None, dict(link.values), None
                )
                choice = request.resolutions.get(conflict.fingerprint, {}).get("choice")
                if choice == "theirs":
                    results[ref] = None
                elif choice == "ours":
                    await keep_ends([(kind, key)])
                else:
                    found.append(conflict)
    return found


async def _holders(
    view: BranchView, results: dict[Ref, dict[str, Any] | None], ref: Ref, attribute: str, value: Any
) -> list[str]:
    """The other Records of the merged state that hold `value` of a unique Attribute."""
    _, name, key = ref
    others = []
    for other in (await view.keys_with_value(name, attribute, [value])).get(value, []):
        if other == key:
            continue
        merged = results.get(("record", name, other), ...)
        if merged is not ... and (merged is None or merged.get(attribute) != value):
            continue
        others.append(other)
    return sorted(others)


async def _unique_values(
    view: BranchView,
    domain: Domain,
    results: dict[Ref, dict[str, Any] | None],
    taken: dict[Ref, dict[str, dict[str, Any]]],
    request: MergeRequest,
) -> list[Found]:
    """A unique value the source set that another Record of the target holds."""
    found: list[Found] = []
    for ref, notes in sorted(taken.items()):
        entity, name, key = ref
        after = results.get(ref)
        if entity != "record" or after is None:
            continue
        kind = domain.schema.kinds.get(name)
        if kind is None:
            continue
        for attribute in sorted(notes):
            spec = kind.attributes.get(attribute)
            value = after.get(attribute)
            if spec is None or not spec.unique or value is None:
                continue
            others = await _holders(view, results, ref, attribute, value)
            if not others:
                continue
            conflict = Found("unique_taken", "record", name, key, attribute, others, value)
            resolution = request.resolutions.get(conflict.fingerprint)
            for _ in range(10):  # a value chosen may be held elsewhere too: a Conflict of its own
                if resolution is None or resolution["choice"] != "value":
                    break
                value = after[attribute] = resolution.get("value")
                others = await _holders(view, results, ref, attribute, value) if value is not None else []
                if not others:
                    break
                conflict = Found("unique_taken", "record", name, key, attribute, others, value)
                resolution = request.resolutions.get(conflict.fingerprint)
            if resolution is None or (resolution["choice"] == "value" and others):
                found.append(conflict)
            elif resolution["choice"] == "ours":
                current = await _current(view, ref)
                if current is None or current.get(attribute) is None:
                    after.pop(attribute, None)
                else:
                    after[attribute] = current[attribute]
                notes.pop(attribute, None)
    return found


__all__ = [
    "Found",
    "MergeRequest",
    "MergeResult",
    "lock_pair",
    "merge",
    "touched_kinds",
]
