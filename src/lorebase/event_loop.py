"""The event loop of every service process (uvloop) and its garbage collector.

- The services spend most of their time moving bytes between sockets (gRPC, HTTP, PostgreSQL,
  NATS), which uvloop does several times faster than the default asyncio loop (measured on the SSE
  fan-out: docs/feed.md). grpc.aio and asyncpg run on any asyncio loop.
- A full collection of Python's cyclic garbage collector walks every object alive. Right after
  start-up most of them are the imported modules (FastAPI, pydantic, gRPC, SQLAlchemy, protobuf
  descriptors), which never die: in the gateway with 1,000 event streams open, a full collection
  took 140 ms and held every stream back that long. `settled()` is called once a service is
  ready: it collects once, then moves every object alive into the permanent generation
  (`gc.freeze()`), which later collections do not walk.
- A bulk load (an import of 100,000 Records) builds millions of objects that all live until its
  commit: every collection meanwhile walks them and frees nothing (a tenth of an import's CPU).
  `collection_paused()` holds the collector off for such a stretch; nested and concurrent holds
  count, and the collector runs again when the last one ends.
- Work that holds the loop (CPU between two awaits) delays every request the process serves.
  `watch_lag(interval_s)` wakes every `interval_s` and measures how late it woke: each lateness is
  counted in `lorebase_event_loop_lag_seconds`, and one past `interval_s` is logged (WARNING, `event
  loop held N ms (M ms on CPU)`) with its time, so a stall can be matched with what ran then
  (bench/big_backfill.py reports them per phase of a large schema change). The CPU the loop's thread
  used meanwhile tells work on the loop from a machine too busy to run the process (or a thread
  holding the GIL). On when `services.loop_lag_ms` is above 0.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import uvloop

from lorebase.metrics import LOOP_LAG

logger = logging.getLogger("lorebase.event_loop")

T = TypeVar("T")

# Python's defaults are (700, 10, 10): with thousands of open streams, a collection every 700 new
# objects, and a full one every 100 of those. These make each 50 times rarer (see the module doc).
GC_THRESHOLDS = (50_000, 20, 25)


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a service's main coroutine to completion on a new uvloop loop."""
    return uvloop.run(main)


def settled() -> None:
    """The service has started: later garbage collections skip what is alive now, and run less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


_holds = 0  # collection_paused() blocks running now
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while the block runs (reference counting still frees
    everything that is not in a cycle); the collector is left as it was when the last hold ends."""
    global _holds, _resume
    if _holds == 0:
        _resume = gc.isenabled()
        gc.disable()
    _holds += 1
    try:
        yield
    finally:
        _holds -= 1
        if _holds == 0 and _resume:
            gc.enable()


async def watch_lag(interval_s: float) -> None:
    """Until cancelled: sleep `interval_s`, count how late the wake-up came, log a lateness past
    `interval_s` (the loop was held that long by something that did not await)."""
    clock, used = time.perf_counter, time.thread_time
    while True:
        asked, cpu = clock(), used()
        await asyncio.sleep(interval_s)
        late = clock() - asked - interval_s
        LOOP_LAG.observe(max(0.0, late))
        if late > interval_s:
            logger.warning("event loop held %.1f ms (%.1f ms on CPU)", late * 1000, (used() - cpu) * 1000)


__all__ = ["collection_paused", "run", "settled", "watch_lag"]
