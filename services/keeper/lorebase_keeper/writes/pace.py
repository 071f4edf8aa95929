"""Long CPU work on keeper's event loop, in slices that let the process serve others meanwhile.

Keeper is one asyncio process: a step that computes for 200 ms without awaiting holds every read
and write the process serves for 200 ms. A worker thread does not help much there: Python code in a
thread takes the GIL back for a switch interval (5 ms) each time the loop's thread gives it up, so
a request that waits on the loop a dozen times (each socket read and write, each PostgreSQL round
trip) waits up to a dozen switch intervals; and one C call (a sort, a large JSON dump) holds the GIL
until it returns, thread or not.

So a large change set's work (a schema change over a million Records) runs on the loop, and calls
`Pacer.step()` between small units of it (a Record migrated, a row planned). Once `SLICE_S` has
passed since the last pause, it pauses: with `duty` 1 only to let the loop serve what is ready (the
work under a branch's lock must not take longer), with `duty` below 1 (a migration staged in the
background: `keeper.schema_changes.duty`) for as long again times (1 - duty) / duty, so that the
work, its PostgreSQL round trips included, takes about `duty` of the time and leaves the rest of
the machine's cores to the foreground. `sorted_paced` sorts in slices too.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

SLICE_S = 0.001  # the longest stretch of work between two pauses
_RUN = 2_000  # items per sorted run of sorted_paced (about a millisecond each)


class Pacer:
    """Pauses a long piece of work every `SLICE_S`: a yield at `duty` 1, else a sleep as long as
    the stretch of work times (1 - duty) / duty."""

    def __init__(self, duty: float = 1.0, slice_s: float | None = None) -> None:
        if not 0 < duty <= 1:
            raise ValueError(f"duty is a share of the time above 0 and at most 1, not {duty!r}")
        self.duty = duty
        self.slice_s = SLICE_S if slice_s is None else slice_s
        self.paused_s = 0.0  # slept so far (not the yields)
        self._since = time.perf_counter()

    def due(self) -> bool:
        """Whether `step` would pause now. A loop over 100,000 items asks this before each
        `await step()`: the await alone cost more than the item's own work in a load's checks
        (0.04 s per 100,000, five times over in an import)."""
        return time.perf_counter() - self._since >= self.slice_s

    async def step(self) -> None:
        """Between two units of the work: a pause when a slice has passed since the last one."""
        worked = time.perf_counter() - self._since
        if worked < self.slice_s:
            return
        pause = worked * (1 - self.duty) / self.duty
        self.paused_s += pause
        await asyncio.sleep(pause)
        self._since = time.perf_counter()

    async def each(self, items: Iterable[T]) -> list[T]:
        """`items` as a list, made in slices (a generator that computes each item)."""
        out: list[T] = []
        for item in items:
            out.append(item)
            if self.due():
                await self.step()
        return out


async def sorted_paced(items: list[T], key: Callable[[T], Any], pacer: Pacer) -> list[T]:
    """`sorted(items, key=key)` (stable, the same list), in slices of `pacer`: sorted runs of
    `_RUN` items, merged item by item unless they follow one another already."""
    if len(items) <= _RUN:
        return sorted(items, key=key)
    runs: list[list[T]] = []
    for start in range(0, len(items), _RUN):
        runs.append(sorted(items[start : start + _RUN], key=key))
        await pacer.step()
    if all(key(before[-1]) <= key(after[0]) for before, after in zip(runs, runs[1:], strict=False)):
        # Runs in order (a load whose records come in key order, as an export lists them): their
        # concatenation is the sort, without the merge's key calls item by item (0.25 s of a
        # 100,000-Record import's work under its branch's lock).
        return [item for run in runs for item in run]
    return await pacer.each(heapq.merge(*runs, key=key))


__all__ = ["SLICE_S", "Pacer", "sorted_paced"]
