"""Rate limits as token buckets: per principal in keeper and feed, per client address in the gateway.

Keeper charges every authenticated call once, in its class, reads or writes (an agent task write,
with its branch, commit, Proposal and merge, is one write); so do the memory calls, keeper's
MemoryStore and feed's MemoryJournal (`keeper.rate_limits`). A call over the limit is
`429 rate-limited` with `retry_after` (seconds), which the gateway sends as `Retry-After`. The
buckets live in each process: with N keeper replicas a principal may make up to N times the
configured rate, and feed's journal calls have buckets of their own. The built-in admin principal
is not limited.

The gateway keeps one more class, `unauthenticated`, per client address (lorebase_gateway.
address_limits): `check` before a call, `spend` after it answered 401.

The table of buckets is bounded (`tracked`): the least recently seen are forgotten, and come back
with a full bucket.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from lorebase.problems import Problem
from lorebase.settings_model import RateLimits

CLASSES = ("reads", "writes")
TRACKED = 100_000  # buckets kept per process; the least recently seen are forgotten


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: float
    setting: str = ""  # the setting that configures it, named in the refusal
    what: str = ""  # what is counted, in the refusal ("reads"; default: the class name)


class RateLimiter:
    def __init__(
        self,
        limits: dict[str, Limit],
        *,
        clock: Callable[[], float] = time.monotonic,
        tracked: int = TRACKED,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._tracked = tracked
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()

    @classmethod
    def of(cls, rate_limits: RateLimits) -> RateLimiter | None:
        """The per-principal limits of the `keeper.rate_limits` settings (None when disabled)."""
        if not rate_limits.enabled:
            return None
        buckets = dict(zip(CLASSES, (rate_limits.reads, rate_limits.writes), strict=True))
        return cls(
            {
                name: Limit(bucket.per_second, max(bucket.burst, 1.0), f"keeper.rate_limits.{name}")
                for name, bucket in buckets.items()
            }
        )

    def charge(self, who: str, kind: str) -> None:
        """Take one token of `kind` for `who`, or refuse with 429 and when to retry."""
        bucket = self._bucket(who, kind)
        if bucket.tokens < 1.0:
            raise self._refusal(who, kind, bucket)
        bucket.tokens -= 1.0

    def check(self, who: str, kind: str) -> None:
        """Refuse with 429 when `who` has no token of `kind` left; take nothing."""
        bucket = self._bucket(who, kind)
        if bucket.tokens < 1.0:
            raise self._refusal(who, kind, bucket)

    def spend(self, who: str, kind: str) -> None:
        """Take one token of `kind` for `who` if there is one (never refuses)."""
        bucket = self._bucket(who, kind)
        bucket.tokens = max(0.0, bucket.tokens - 1.0)

    def _bucket(self, who: str, kind: str) -> _Bucket:
        limit = self.limits[kind]
        now = float(self._clock())
        key = (who, kind)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(limit.burst, now)
            self._buckets[key] = bucket
            if len(self._buckets) > self._tracked:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(limit.burst, bucket.tokens + (now - bucket.at) * limit.per_second)
            bucket.at = now
        return bucket

    def __len__(self) -> int:
        """The buckets held now (at most `tracked`)."""
        return len(self._buckets)

    def _refusal(self, who: str, kind: str, bucket: _Bucket) -> Problem:
        limit = self.limits[kind]
        wait = math.ceil((1.0 - bucket.tokens) / limit.per_second) if limit.per_second > 0 else 60
        return Problem(
            429,
            "rate-limited",
            f"{who} made more {limit.what or kind} than {limit.setting or 'the rate limit'} allows "
            f"({limit.per_second:g}/s, bursts of {limit.burst:g}); retry after {wait} s",
            retry_after=max(wait, 1),
            rate_class=kind,
        )


__all__ = ["CLASSES", "TRACKED", "Limit", "RateLimiter"]
