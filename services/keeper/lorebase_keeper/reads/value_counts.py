"""The distinct values of an Attribute with their Records, at a branch head, kept up to date by the
changes of each commit rather than counted again.

Resolve indexes the values of enums, resolvable Attributes and strings with few distinct values; to
know "few" it needs the distinct values of the Attribute at the head. Counting them scans every
Record of the Kind, which a large Domain cannot do after each commit. So each keeper process keeps,
per branch, Kind and Attribute, the counts at some generation, and brings them to the head by
reading the history rows of the Kind after it (one range of the history_generation index): a
created Record adds its value, a changed one moves it, a deleted one removes it. The answer is the
same as a fresh count at that head.

An Attribute with more than `hard_cap` distinct values keeps no counts: it cannot be indexed, and it
stays so until enough values were removed that it might have dropped under the limit
(`hard_cap - limit` removals); then it is counted again. A changed first-parent chain (a
fast-forward) or a long way behind (`max_delta` changes) is counted again too.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from lorebase_store import BranchChain, Txn

_KEPT = 2048  # (branch, Kind, Attribute) entries per process


@dataclass
class _Counted:
    chain: tuple[tuple[str, int, int | None], ...]
    generation: int
    counts: dict[str, int] | None  # None: more than the hard cap of distinct values
    removals: int = 0  # values removed since the counts were dropped


class ValueCounts:
    def __init__(self, *, max_delta: int = 50_000) -> None:
        self.max_delta = max_delta
        self._entries: OrderedDict[tuple[Any, ...], _Counted] = OrderedDict()

    async def distinct(
        self,
        txn: Txn,
        domain_id: int,
        branch: str,
        chain: BranchChain,
        generation: int,
        kind: str,
        attributes: dict[str, int],
    ) -> dict[str, list[tuple[str, int]] | None]:
        """Per Attribute (name -> limit): its distinct values with their Records, in value order, at
        most limit + 1 of them (as `Txn.value_counts` answers for the head); None when it has more
        than the hard cap of distinct values."""
        entries: dict[str, _Counted] = {}
        stale: list[str] = []
        for name in attributes:
            entry = self._entries.get((domain_id, branch, kind, name))
            if entry is None or entry.chain != chain.segments or entry.generation > generation:
                stale.append(name)
            else:
                entries[name] = entry
        behind = [e for e in entries.values() if e.generation < generation]
        if behind:
            since = min(e.generation for e in behind)
            rows = await txn.changes_after(
                domain_id, chain, since, entity="record", name=kind, limit=self.max_delta + 1
            )
            if len(rows) > self.max_delta:
                stale += [n for n, e in entries.items() if e.generation < generation]
            else:
                for name, entry in entries.items():
                    # Checked again after the await: a concurrent read may have moved it meanwhile.
                    if entry.generation < generation and name not in stale and entry.generation >= since:
                        _apply(entry, name, [r for r in rows if r.generation > entry.generation])
                        entry.generation = generation
        for name, limit in attributes.items():
            entry = entries.get(name)
            if entry is not None and name not in stale:
                hard = _hard_cap(limit)
                if entry.counts is None and entry.removals >= hard - limit:
                    stale.append(name)
        answer: dict[str, list[tuple[str, int]] | None] = {}
        for name, limit in attributes.items():
            hard = _hard_cap(limit)
            entry = entries.get(name)
            if name in stale or entry is None or entry.generation != generation:
                # Counted afresh at this read's head. A concurrent read may have moved the kept counts
                # past it: then this answer is counted but not kept.
                found = await txn.value_counts(domain_id, branch, kind, name, limit=hard)
                fresh = _Counted(chain.segments, generation, dict(found) if len(found) <= hard else None)
                if name in stale:
                    self._remember((domain_id, branch, kind, name), fresh)
                entry = fresh
            else:
                self._entries.move_to_end((domain_id, branch, kind, name))
            if entry.counts is None:
                answer[name] = None
            else:
                answer[name] = sorted((v, n) for v, n in entry.counts.items() if n > 0)[: limit + 1]
        return answer

    def _remember(self, key: tuple[Any, ...], entry: _Counted) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > _KEPT:
            self._entries.popitem(last=False)


def _hard_cap(limit: int) -> int:
    return max(10 * limit, 500)


def _apply(entry: _Counted, name: str, rows: list[Any]) -> None:
    for row in rows:
        if name not in row.attributes:
            continue
        old = None if row.before is None else row.before.get(name)
        new = None if row.after is None else row.after.get(name)
        if entry.counts is None:
            if old is not None:
                entry.removals += 1
            continue
        if old is not None:
            left = entry.counts.get(str(old), 0) - 1
            if left > 0:
                entry.counts[str(old)] = left
            else:
                entry.counts.pop(str(old), None)
        if new is not None:
            entry.counts[str(new)] = entry.counts.get(str(new), 0) + 1


__all__ = ["ValueCounts"]
