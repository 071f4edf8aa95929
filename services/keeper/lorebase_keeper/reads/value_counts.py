"""The distinct values of an Attribute with their Records, at a branch head, kept up to date by the
changes of each commit rather than counted again.

Resolve indexes the values of enums, resolvable Attributes and strings with few distinct values,
and the titles of each Kind; to know "few" it needs the distinct values of the Attribute at the
head. Counting them scans every Record of the Kind, which a large Domain cannot do after each
commit. So each keeper process keeps, per branch, Kind and Attribute, the counts at some generation,
and brings them to the head by reading the history rows of the Kind after it (one range of the
history_generation index; past a thousand, PostgreSQL counts them first): a created Record adds its value, a changed one moves it, a deleted one
removes it. The answer is the same as a fresh count at that head. Past `max_delta` changes (a
schema change set's million), PostgreSQL lists which Attributes they name, and only those are
counted again: the others' counts move to the head as they are (the first resolve after a
backfill of one Attribute waited seconds for every other to be counted again).

A schema change set's commit says what it moved (`committed`, writes/kept_counts.py): the counts of
the Attributes its changes name, taken from its staged rows before the head moved
(schema_changes/counts.py), become the kept counts at the new head, and the others that stood at
the head before it move there as they are; so the first resolve after a backfill or a conversion of
a million Records reads neither the history nor the Kind. The commit announces them before its
transaction commits (`landing`), and a read that sees the new head before keeper hands them over
(its loop may serve one between the two) waits for them rather than count (3.1 s at a million).

Each kept count also logs which values it moved, and at which generation (the last `_LOG` moves):
the vocabulary (resolve/vocabulary.py) asks what changed since the generation it was built at and
updates only that, instead of sorting and indexing every value again (a Kind of 100,000 titles).

An Attribute with more than `hard_cap` distinct values keeps no counts: it cannot be indexed, and it
stays so until enough values were removed that it might have dropped under the limit
(`hard_cap - limit` removals); then it is counted again. A changed first-parent chain (a
fast-forward) or a long way behind (`max_delta` changes) is counted again too.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from lorebase_keeper.writes import CountsMoved
from lorebase_store import BranchChain, Txn

# How long a read at the head of a commit that hands over counts waits for them (`landing`).
LANDING_WAIT_S = 5.0

_KEPT = 2048  # (branch, Kind, Attribute) entries per process
_FIRST = 1_000  # changes read at first; past them, counted in PostgreSQL before any more are read
_LOG = 4096  # moved values remembered per entry


@dataclass
class _Counted:
    chain: tuple[tuple[str, int, int | None], ...]
    generation: int
    counts: dict[str, int] | None  # None: more than the hard cap of distinct values
    removals: int = 0  # values removed since the counts were dropped
    since: int = 0  # the log holds every value moved after this generation
    log: list[tuple[int, str]] = field(default_factory=list)  # (generation, value) moved, oldest first

    def __post_init__(self) -> None:
        self.since = self.generation


@dataclass(frozen=True)
class Counts:
    """One Attribute's distinct values at a generation: `values` (value -> Records holding it; None
    beyond the hard cap) is the kept entry itself, valid until the caller's next await."""

    generation: int
    values: Mapping[str, int] | None
    _entry: _Counted

    def sorted(self, limit: int) -> list[tuple[str, int]] | None:
        """At most limit + 1 (value, Records) pairs in value order, as `Txn.value_counts` answers."""
        if self.values is None:
            return None
        return sorted((v, n) for v, n in self.values.items() if n > 0)[: limit + 1]

    def moved_since(self, generation: int) -> set[str] | None:
        """The values whose count changed after `generation` up to this one; None when the log does
        not reach back that far (the caller takes every value)."""
        entry = self._entry
        if entry.generation != self.generation or generation < entry.since or generation > self.generation:
            return None
        moved: set[str] = set()
        for at, value in reversed(entry.log):
            if at <= generation:
                break
            moved.add(value)
        return moved


class ValueCounts:
    def __init__(self, *, max_delta: int = 50_000) -> None:
        self.max_delta = max_delta
        self._entries: OrderedDict[tuple[Any, ...], _Counted] = OrderedDict()
        # Commits about to hand over their counts (`landing`), by (Domain, branch, incarnation,
        # generation after them): a read at that head waits for them (`landed`).
        self._landing: dict[tuple[Any, ...], tuple[float, asyncio.Event]] = {}

    async def counted(
        self,
        txn: Txn,
        domain_id: int,
        branch: str,
        chain: BranchChain,
        generation: int,
        attributes: dict[tuple[str, str], int],
        incarnation: tuple[Any, ...] = (),
    ) -> dict[tuple[str, str], Counts]:
        """Per Attribute ((Kind, name) -> limit): its distinct values with their Records at this head
        (values None when it has more than the hard cap of distinct values). The changes since the
        oldest kept count are read in one statement for every Kind. `incarnation` tells apart a
        Domain or branch made again under the same id or name (their creation times): counts of one
        are never moved into the other."""
        at_head = (domain_id, branch, incarnation, generation)
        landing = self._landing.get(at_head)
        if landing is not None:  # its commit landed; keeper hands its counts over at once
            left = landing[0] + LANDING_WAIT_S - time.monotonic()
            try:
                await asyncio.wait_for(landing[1].wait(), max(left, 0))
            except TimeoutError:  # never told: no read waits for it again
                if self._landing.get(at_head) is landing:
                    del self._landing[at_head]
        entries: dict[tuple[str, str], _Counted] = {}
        stale: list[tuple[str, str]] = []
        for where in attributes:
            entry = self._entries.get((domain_id, branch, incarnation, *where))
            if entry is None or entry.chain != chain.segments or entry.generation > generation:
                stale.append(where)
            else:
                entries[where] = entry
        behind = [e for e in entries.values() if e.generation < generation]
        if behind:
            since = min(e.generation for e in behind)
            rows = await txn.changes_after(domain_id, chain, since, entity="record", limit=_FIRST + 1)
            too_many = False
            if len(rows) > _FIRST:
                # Many changes (a schema change set's million): whether they are too many is counted
                # in PostgreSQL, not by making a row of each (seconds of keeper's event loop).
                many = await txn.count_changes_after(
                    domain_id, chain, since, entity="record", limit=self.max_delta + 1
                )
                too_many = many > self.max_delta
                if not too_many:
                    rows = await txn.changes_after(
                        domain_id, chain, since, entity="record", limit=self.max_delta + 1
                    )
            if too_many:
                # Counted again, but only the Attributes those changes name: a schema change set's
                # backfill of one Attribute (a million changes) leaves the others' counts as they
                # were, which a change not naming them does not move (`_apply`).
                behind_kinds = sorted({where[0] for where, e in entries.items() if e.generation < generation})
                named = await txn.attributes_changed_after(domain_id, chain, since, behind_kinds)
                for where, entry in entries.items():
                    # Checked again after the await: a concurrent read may have moved it meanwhile.
                    if entry.generation < generation and entry.generation >= since:
                        if where in named:
                            stale.append(where)
                        else:
                            entry.generation = generation
            else:
                by_kind: dict[str, list[Any]] = {}
                for row in rows:
                    by_kind.setdefault(row.name, []).append(row)
                for where, entry in entries.items():
                    # Checked again after the await: a concurrent read may have moved it meanwhile.
                    if entry.generation < generation and where not in stale and entry.generation >= since:
                        moved = [
                            r
                            for r in by_kind.get(where[0], ())
                            if entry.generation < r.generation <= generation
                        ]
                        _apply(entry, where[1], moved)
                        entry.generation = generation
        for where, limit in attributes.items():
            entry = entries.get(where)
            if entry is not None and where not in stale:
                hard = _hard_cap(limit)
                if entry.counts is None and entry.removals >= hard - limit:
                    stale.append(where)
        fresh: dict[tuple[str, str], _Counted] = {}
        while pending := [
            where
            for where in attributes
            if where not in fresh
            and (where in stale or where not in entries or entries[where].generation != generation)
        ]:
            for where in pending:
                # Counted afresh at this read's head, privately (no other read moves it meanwhile).
                hard = _hard_cap(attributes[where])
                found = await txn.value_counts(domain_id, branch, where[0], where[1], limit=hard)
                fresh[where] = _Counted(
                    chain.segments, generation, dict(found) if len(found) <= hard else None
                )
        # No await from here on: each view is its entry at exactly this generation.
        answer: dict[tuple[str, str], Counts] = {}
        for where in attributes:
            key = (domain_id, branch, incarnation, *where)
            if where in fresh:
                kept = self._entries.get(key)
                if where in stale and (
                    kept is None or kept.chain != chain.segments or kept.generation <= generation
                ):
                    self._remember(key, fresh[where])
                answer[where] = Counts(generation, fresh[where].counts, fresh[where])
            else:
                self._entries.move_to_end(key)
                kept_values = entries[where].counts
                if kept_values is not None and len(kept_values) > _hard_cap(attributes[where]):
                    kept_values = None  # as a fresh count says: more distinct values than kept
                answer[where] = Counts(generation, kept_values, entries[where])
        return answer

    def landing(self, moved: CountsMoved) -> None:
        """A commit that brings counts is about to land (its transaction not committed yet): a read
        that sees its head before `committed` runs (keeper's loop may serve one between the two)
        waits for it, up to LANDING_WAIT_S, rather than count the Attributes it changed again (a
        change set's million changes: seconds)."""
        self._landing.setdefault(_landing_key(moved), (time.monotonic(), asyncio.Event()))

    def landed(self, moved: CountsMoved) -> None:
        """The commit `landing` announced committed or did not: the reads waiting for it go on."""
        landing = self._landing.pop(_landing_key(moved), None)
        if landing is not None:
            landing[1].set()

    def committed(self, moved: CountsMoved) -> None:
        """A commit landed (writes/kept_counts.py): the counts it brings are kept at its head, unless
        a read there counted them already; every other count that stood at the head before it moves
        there if the commit's changes do not name its Attribute (they moved none of its values) and
        is dropped if they do (counted again at its first read, as a count behind by more than
        `max_delta` changes naming it would be)."""
        prefix = (moved.domain_id, moved.branch, moved.incarnation)
        for key, entry in list(self._entries.items()):
            if key[:3] != prefix or entry.chain != moved.chain or entry.generation != moved.before:
                continue
            where = (key[3], key[4])
            if where in moved.counts:
                continue
            if where in moved.named:
                del self._entries[key]
            else:
                entry.generation = moved.after
        for where, values in moved.counts.items():
            key = (*prefix, *where)
            kept = self._entries.get(key)
            if kept is not None and kept.chain == moved.chain and kept.generation >= moved.after:
                continue
            self._remember(
                key, _Counted(moved.chain, moved.after, {v: n for v, n in values.items() if n > 0})
            )
        self.landed(moved)

    def _remember(self, key: tuple[Any, ...], entry: _Counted) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > _KEPT:
            self._entries.popitem(last=False)


def _landing_key(moved: CountsMoved) -> tuple[Any, ...]:
    return (moved.domain_id, moved.branch, moved.incarnation, moved.after)


def _hard_cap(limit: int) -> int:
    return max(10 * limit, 500)


def _text(value: Any) -> str | None:
    """A stored value as PostgreSQL's `->>` gives it, which a fresh count groups by (a boolean is
    `true`, not Python's `True`); None for none (JSON null too)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value).decode()


def _apply(entry: _Counted, name: str, rows: list[Any]) -> None:
    for row in rows:
        if name not in row.attributes:
            continue
        old = None if row.before is None else _text(row.before.get(name))
        new = None if row.after is None else _text(row.after.get(name))
        if entry.counts is None:
            if old is not None:
                entry.removals += 1
            continue
        if old is not None:
            left = entry.counts.get(old, 0) - 1
            if left > 0:
                entry.counts[old] = left
            else:
                entry.counts.pop(old, None)
            entry.log.append((row.generation, old))
        if new is not None:
            entry.counts[new] = entry.counts.get(new, 0) + 1
            entry.log.append((row.generation, new))
    if len(entry.log) > _LOG:
        cut = len(entry.log) - _LOG // 2
        entry.since = max(entry.since, entry.log[cut - 1][0])
        del entry.log[:cut]


__all__ = ["Counts", "ValueCounts"]
