"""Reads on hot standbys, under the consistency rule (DESIGN.md; lorebase.consistency).

A standby replays the primary's WAL a little behind it. It may answer a read only when that cannot
show the client an older state than it is owed:

- **A read at a Revision** (`at` = a full id) answers the same bytes wherever that Revision is
  replayed (commits are atomic: a standby that shows the `revisions` row shows everything the
  commit wrote). A standby answers it once it shows that row, and only while it lags the primary by
  at most `database.standby_max_lag_s` (authorization is read there too, and keeper already
  trusts grants that old: keeper.auth.authz.grants_cache_ttl_s).
- **A read that opted into staleness** (`max-stale=N`) is answered by a standby that lags by at most
  N seconds and shows the Revision the client has seen (Lorebase-Min-Revision, its ETag), if any.
- **Every other read** (plain reads, writes, dry runs without an opt-in) goes to the primary, so a
  plain read is as fresh as the head when it is served.

A named Revision not replayed yet is waited for up to `database.standby_wait_s` (polled every few
milliseconds), then the primary answers. A standby that fails a read (gone, or a query cancelled by
a conflict with recovery) is set aside for `RETRY_S` and the read runs on the primary.

**Lag.** A monitor samples, every `SAMPLE_S`, the primary's WAL position (`pg_current_wal_lsn()`)
and each standby's replayed position (`pg_last_wal_replay_lsn()`). A standby that has replayed the
position the primary had at time t holds every commit acknowledged before t, so its lag is at most
`now - t` for the latest such sample; with no such sample, it is unknown and the standby answers
nothing. Revisions a standby was seen to hold are remembered (a bounded set per standby), so the
check costs one statement per Revision and standby, not one per read.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lorebase.consistency import ASK

if TYPE_CHECKING:  # names for annotations only
    from sqlalchemy.ext.asyncio import AsyncEngine

    from lorebase_store.hot import HotReads

logger = logging.getLogger("lorebase.store.standbys")

SAMPLE_S = 0.1  # how often the monitor samples the WAL positions
RETRY_S = 1.0  # how long a standby that failed a read is set aside
POLL_S = 0.005  # how often a read waiting for a Revision looks again
_PRIMARY_SAMPLES = 600  # (time, position) samples of the primary kept: a minute at SAMPLE_S
_KNOWN_REVISIONS = 4096

_REPLAYED = "SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn"
_CURRENT = "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"
_HAS_REVISION = "SELECT 1 FROM revisions WHERE id = $1"


@dataclass(eq=False)
class Standby:
    """One hot standby: its SQLAlchemy engine (Database.read), its raw pool (HotReads) and what the
    monitor knows of it."""

    url: str
    engine: AsyncEngine
    hot: HotReads
    replayed: int | None = None  # its replayed WAL position at the last sample
    fresh_at: float | None = None  # it holds every commit acknowledged before this (None: unknown)
    set_aside_until: float = 0.0
    revisions: OrderedDict[str, None] = field(default_factory=OrderedDict)
    served: int = 0

    def holds(self, revision: str) -> bool:
        if revision in self.revisions:
            self.revisions.move_to_end(revision)
            return True
        return False

    def remember(self, revision: str) -> None:
        self.revisions[revision] = None
        while len(self.revisions) > _KNOWN_REVISIONS:
            self.revisions.popitem(last=False)

    def fail(self, now: float) -> None:
        self.set_aside_until = now + RETRY_S
        self.replayed = self.fresh_at = None
        self.revisions.clear()

    def lag_s(self, now: float) -> float | None:
        """At most this far behind the primary now (None: unknown)."""
        return None if self.fresh_at is None else now - self.fresh_at


@dataclass
class Standbys:
    """The standbys of a Database and the choice of one per read (see the module docstring)."""

    standbys: list[Standby]
    primary_position: Callable[[], Any]  # an awaitable of the primary's WAL position
    wait_s: float
    max_lag_s: float
    clock: Callable[[], float] = time.monotonic
    _samples: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=_PRIMARY_SAMPLES))
    _turn: itertools.count[int] = field(default_factory=itertools.count)
    _monitor: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._monitor is None and self.standbys:
            self._monitor = asyncio.get_running_loop().create_task(self._watch())

    async def close(self) -> None:
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
            self._monitor = None

    async def choose(self) -> Standby | None:
        """The standby that may answer the read being served (lorebase.consistency.ASK), or None
        for the primary."""
        ask = ASK.get()
        if ask.plain or not self.standbys:
            return None
        self.start()
        bound = self.max_lag_s if ask.max_stale_s is None else ask.max_stale_s
        needed = ask.at if ask.max_stale_s is None else (ask.at or ask.seen)
        deadline = self.clock() + self.wait_s
        while True:
            standby = await self._eligible(bound, needed)
            if standby is not None or needed is None or self.clock() >= deadline:
                return standby
            await asyncio.sleep(POLL_S)

    async def _eligible(self, bound: float, needed: str | None) -> Standby | None:
        now = self.clock()
        count = len(self.standbys)
        start = next(self._turn)
        for offset in range(count):
            standby = self.standbys[(start + offset) % count]
            lag = standby.lag_s(now)
            if standby.set_aside_until > now or lag is None or lag > bound:
                continue
            if needed is not None and not await self._holds(standby, needed):
                continue
            standby.served += 1
            return standby
        return None

    async def _holds(self, standby: Standby, revision: str) -> bool:
        if standby.holds(revision):
            return True
        try:
            found = await standby.hot.fetchval("standby_has_revision", _HAS_REVISION, revision)
        except Exception:  # gone or refusing: set aside, the primary answers
            self.failed(standby)
            return False
        if found:
            standby.remember(revision)
        return bool(found)

    def failed(self, standby: Standby) -> None:
        """A read on `standby` failed: set it aside for a while."""
        logger.warning("standby %s failed a read; reads go elsewhere for %.0f s", standby.hot.host, RETRY_S)
        standby.fail(self.clock())

    async def _watch(self) -> None:
        while True:
            try:
                await self.sample()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("sampling the standbys failed")
            await asyncio.sleep(SAMPLE_S)

    async def sample(self) -> None:
        """One sample of the primary's position and each standby's, and each standby's lag."""
        taken = self.clock()
        try:
            position = int(await self.primary_position())
        except Exception:  # the primary is gone (a failover): no new bound, lags age
            position = None
        if position is not None:
            self._samples.append((taken, position))
        for standby in self.standbys:
            try:
                replayed = await standby.hot.fetchval("standby_replayed", _REPLAYED)
            except Exception:
                standby.replayed = standby.fresh_at = None
                continue
            standby.replayed = None if replayed is None else int(replayed)
            standby.fresh_at = self._fresh_at(standby.replayed)

    def _fresh_at(self, replayed: int | None) -> float | None:
        """The time of the latest primary sample at or below `replayed`."""
        if replayed is None:
            return None
        for at, position in reversed(self._samples):
            if position <= replayed:
                return at
        return None

    def report(self) -> list[dict[str, Any]]:
        """Each standby's address, lag and reads served (for logs and the bench)."""
        return [
            {
                "standby": s.hot.host,
                "lag_s": s.lag_s(self.clock()),
                "replayed": s.replayed,
                "served": s.served,
            }
            for s in self.standbys
        ]


__all__ = ["POLL_S", "RETRY_S", "SAMPLE_S", "Standby", "Standbys"]
