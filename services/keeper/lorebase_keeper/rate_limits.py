"""Rate limits per principal: a reads class and a writes class, each a token bucket.

Keeper charges every authenticated call once, in its class (an agent task write, with its branch,
commit, Proposal and merge, is one write). A call over the limit is `429 rate-limited` with
`retry_after` (seconds), which the gateway sends as `Retry-After`. The buckets live in each keeper
process: with N keeper replicas a principal may make up to N times the configured rate. The built-in
admin principal is not limited.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass

from lorebase.config import Settings
from lorebase.problems import Problem

CLASSES = ("reads", "writes")
_TRACKED = 100_000  # principals kept per process; the least recently seen are forgotten


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: float


class RateLimiter:
    def __init__(self, limits: dict[str, Limit], *, clock: object = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter | None:
        if not settings.get("keeper.rate_limits.enabled", True):
            return None
        limits = {}
        for name in CLASSES:
            per_second = float(settings.get(f"keeper.rate_limits.{name}.per_second"))
            burst = float(settings.get(f"keeper.rate_limits.{name}.burst"))
            limits[name] = Limit(per_second, max(burst, 1.0))
        return cls(limits)

    def charge(self, principal: str, kind: str) -> None:
        """Take one token of `kind` for `principal`, or refuse with 429 and when to retry."""
        limit = self.limits[kind]
        now = float(self._clock())  # type: ignore[operator]
        key = (principal, kind)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(limit.burst, now)
            self._buckets[key] = bucket
            if len(self._buckets) > _TRACKED:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(limit.burst, bucket.tokens + (now - bucket.at) * limit.per_second)
            bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return
        wait = math.ceil((1.0 - bucket.tokens) / limit.per_second) if limit.per_second > 0 else 60
        raise Problem(
            429,
            "rate-limited",
            f"{principal} made more {kind} than keeper.rate_limits.{kind} allows "
            f"({limit.per_second:g}/s, bursts of {limit.burst:g}); retry after {wait} s",
            retry_after=wait,
            rate_class=kind,
        )


__all__ = ["CLASSES", "Limit", "RateLimiter"]
