"""The merge base and the two sides of a merge.

The merge base is the newest Revision both first-parent histories share, or where the last merge of
the source into the target stood (`branch_merges`), whichever is newer. What each side changed since
the base comes from its history rows (`Side`); what the target holds now is read through its
`BranchView`. Both branches are locked first, in name order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.problems import Problem
from lorebase_keeper.domains import Domain
from lorebase_keeper.writes import BranchView
from lorebase_store import BranchChain, BranchRow, HistoryRow, RevisionRow, Txn
from lorebase_store.chains import branch_chain

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


async def find_base(
    txn: Txn, domain: Domain, source: BranchRow, target: BranchRow, *, named: str | None = None
) -> tuple[BranchChain, BranchChain, int, int, int]:
    """Both histories, their newest shared generation, and the merge base on each side. `named`: the
    branch whose last merge of the source counts, when `target` stands in for it (a fork of its head:
    the same history up to there)."""
    s_chain = await branch_chain(txn, domain.id, source)
    t_chain = await branch_chain(txn, domain.id, target)
    common = _common(source, s_chain, target, t_chain)
    s_base = t_base = common
    name = named or target.name
    last = await txn.last_merge(domain.id, source.name, name)
    # A merge that found nothing new on the source (it took the source at the fork, a Revision of
    # the branch it forked from) still moves the target's side of the base: what the target changes
    # after it is its change since that merge.
    if last is not None and (
        (last[0] > common and s_chain.holds(source.name, last[0]))
        or (last[0] == common and t_chain.holds(name, last[1]))
    ):
        s_base, t_base = last
    return s_chain, t_chain, common, s_base, t_base


def change_set_digest(items: list[Any]) -> str:
    """What tells one change set from another across branches (its items, canonical)."""
    return sha256_hex(canonical_json(items))


async def schema_changes_to_bring(
    txn: Txn, domain: Domain, source: BranchRow, target: BranchRow
) -> list[RevisionRow]:
    """The source's schema Revisions since the merge base whose change sets the target has not
    applied (one kept before migration 0019 counts as not applied): what merging would bring."""
    s_chain, t_chain, _, s_base, t_base = await find_base(txn, domain, source, target)
    brought = await txn.schema_revisions(domain.id, s_chain, after=s_base)
    if not brought:
        return []
    own = await txn.schema_revisions(domain.id, t_chain, after=t_base)
    kept = await txn.schema_change_sets(domain.id, [r.id for r in (*brought, *own)])
    on_target = {change_set_digest(kept[r.id]) for r in own if r.id in kept}
    return [r for r in brought if r.id not in kept or change_set_digest(kept[r.id]) not in on_target]


async def touched_kinds(txn: Txn, domain: Domain, source: BranchRow, target: BranchRow) -> list[str]:
    """The Kinds the source changed since the merge base (a Relation counts its two Kinds)."""
    s_chain, _, _, s_base, _ = await find_base(txn, domain, source, target)
    kinds: set[str] = set()
    for row in await txn.changes_after(domain.id, s_chain, s_base):
        if row.entity == "record":
            kinds.add(row.name)
        elif (relation := domain.schema.relations.get(row.name)) is not None:
            kinds |= {relation.from_kind, relation.to_kind}
    return sorted(kinds)


async def prefetch(view: BranchView, refs: Any) -> None:
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


async def current_values(view: BranchView, ref: Ref) -> dict[str, Any] | None:
    entity, name, key = ref
    if entity == "record":
        row = (await view.get_records(name, [key])).get(key)
        return None if row is None else dict(row.values)
    from_key, _, to_key = key.partition("->")
    link = (await view.get_links(name, [(from_key, to_key)])).get((from_key, to_key))
    return None if link is None else dict(link.values)


__all__ = ["Ref", "Side", "current_values", "find_base", "lock_pair", "prefetch", "touched_kinds"]
