"""The value counts a change set's commit hands resolve (writes/kept_counts.py), taken from its own
staged rows before the head moves, so no reader counts a backfilled or converted Attribute over
the whole Kind at the first resolve after it (5.3 s at a million Records, on the reading request).

Resolve keeps, per branch, Kind and Attribute, the distinct values with their Records
(reads/value_counts.py) and moves them from head to head by each commit's history rows: a change
naming the Attribute takes its value before away and adds its value after. The staged rows are
those history rows before they are written, so the same sums come out of them, in PostgreSQL
(`staged_value_deltas`: a GROUP BY over the staged rows, no row read into keeper):

- outside the lock, once the rows are staged: for each (Kind, Attribute) the changes name (the
  migration lists them as it plans the rows) that resolve reads (`values_read`) how many Records each of its values gains or loses;
  for one that the Kind held before the change set under that name (a conversion), its counts at
  the branch's head then, as resolve keeps them (counted there if no read did: the change set's
  job pays, not a reader);
- under the lock, the catch-up's rows (the writes meanwhile, migrated again) replace their staged
  rows' share, and the kept counts are brought to the head the commit stands on (the few changes
  meanwhile, read as a resolve reads them);
- when the commit landed, the counts at the new head (the counts before plus the sums) are handed
  to the kept counts, and those of the Attributes the changes do not name move there as they are.

Each is exactly what a count at the new head gives (tests/integration/test_value_counts.py). Left
to a reader (counted at the first resolve, as before): an Attribute past its kept number of
distinct values, a merge's catch-up, an overlay branch (its reads count nothing kept), and another
keeper process (each keeps its own counts). A renamed Kind's Records are deleted under the old name
and created under the new one, each a staged row: the new name's counts are summed like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from lorebase.schema.changes import Plan
from lorebase.vocabulary import values_read
from lorebase_keeper.domains import Domain
from lorebase_keeper.writes import CountsMoved, KeptCounts, Where
from lorebase_store import BranchChain, BranchRow, Txn


@dataclass(frozen=True)
class StagedCounts:
    """What the staged rows do to the value counts: the (Kind, Attribute) they name, and per
    Attribute resolve reads (-> the values it reads) how many Records each value gains (None: more
    values moved than are kept). `before`: those the Kind held under that name before the change set
    (their counts at the head the commit stands on are added), with those counts once known."""

    named: frozenset[Where]
    limits: Mapping[Where, int]
    moved: Mapping[Where, Mapping[str, int] | None]
    before: Mapping[Where, Mapping[str, int] | None] = field(default_factory=dict)

    async def caught_up(self, txn: Txn, staging: str, keys: list[tuple[str, str]], sign: int) -> StagedCounts:
        """With (sign 1) or without (-1) the share of the staged rows of these (Kind, key): the
        catch-up's rows are added after it staged them, the rows they replace taken out before."""
        records = [(kind, key) for kind, key in keys if any(kind == k for k, _ in self.limits)]
        found = await txn.staged_value_deltas(staging, _caps(self.limits), records) if records else {}
        moved = dict(self.moved)
        for where, deltas in found.items():
            total = moved.get(where, {})
            if deltas is None or total is None:
                moved[where] = None
                continue
            merged = dict(total)
            for value, delta in deltas.items():
                merged[value] = merged.get(value, 0) + sign * delta
            moved[where] = merged
        return replace(self, moved=moved)

    def at_new_head(self) -> Mapping[Where, Mapping[str, int]]:
        """The counts at the new head of each Attribute whose counts can be known (every value held
        by at least one Record)."""
        out: dict[Where, Mapping[str, int]] = {}
        for where in self.limits:
            moved = self.moved.get(where, {})
            base = self.before.get(where, {})  # None: not known (more values than kept)
            if moved is None or base is None:
                continue
            counts = dict(base)
            for value, delta in moved.items():
                counts[value] = counts.get(value, 0) + delta
            if any(n < 0 for n in counts.values()):  # never: the counts before did not hold them
                continue
            out[where] = {value: n for value, n in counts.items() if n > 0}
        return out


async def of_staged(txn: Txn, staging: str, named: set[Where], domain: Domain, plan: Plan) -> StagedCounts:
    """What the staged rows of `staging`, whose Record changes name `named`, move (outside the
    lock, the rows all staged)."""
    limits = domain.settings.model.read.resolve
    read: dict[Where, int] = {}
    for kind_name, name in named:
        kind = plan.schema.kinds.get(kind_name)
        if kind is None or name not in kind.attributes:
            continue
        most = values_read(kind, name, limits)
        if most is not None:
            read[(kind_name, name)] = most
    moved = await txn.staged_value_deltas(staging, _caps(read)) if read else {}
    before = {
        where: None
        for where in read
        if where[0] in domain.schema.kinds and where[1] in domain.schema.kinds[where[0]].attributes
    }
    return StagedCounts(frozenset(named), read, moved, before)


async def counted_before(
    kept: KeptCounts,
    txn: Txn,
    domain: Domain,
    row: BranchRow,
    chain: BranchChain,
    generation: int,
    counts: StagedCounts,
) -> StagedCounts:
    """`counts` with the kept counts at this head of the Attributes the Kind held before (counted
    there if none were kept: once outside the lock, so that under it only the few changes meanwhile
    are read)."""
    if not counts.before:
        return counts
    wanted = {where: counts.limits[where] for where in counts.before}
    found = await kept.at_head(txn, domain.id, row.name, chain, generation, wanted, incarnation(domain, row))
    return replace(counts, before={where: found.get(where) for where in counts.before})


def moved(
    domain: Domain, row: BranchRow, chain: BranchChain, before: int, after: int, counts: StagedCounts
) -> CountsMoved:
    """What the commit from `before` to `after` tells the kept counts."""
    return CountsMoved(
        domain.id,
        row.name,
        incarnation(domain, row),
        chain.segments,
        before,
        after,
        counts.named,
        counts.at_new_head(),
    )


def incarnation(domain: Domain, row: BranchRow) -> tuple[object, ...]:
    """What tells apart a Domain or branch made again under its id or name (as resolve keys them)."""
    return (domain.row.created_at, row.created_at)


def _caps(limits: Mapping[Where, int]) -> dict[Where, int]:
    """Values moved per Attribute worth summing: twice the distinct values resolve keeps of it
    (reads/value_counts.py `_hard_cap`): its values before and after."""
    return {where: 2 * max(10 * limit, 500) for where, limit in limits.items()}


__all__ = ["StagedCounts", "counted_before", "incarnation", "moved", "of_staged"]
