"""Token buckets per principal and class."""

from __future__ import annotations

import pytest

from lorebase.problems import Problem
from lorebase.rate_limits import Limit, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter({"reads": Limit(2, 3), "writes": Limit(1, 1)}, clock=clock)
    for _ in range(3):
        limiter.charge("svc_a", "reads")
    with pytest.raises(Problem) as refused:
        limiter.charge("svc_a", "reads")
    assert refused.value.status == 429 and refused.value.extra["retry_after"] == 1
    limiter.charge("svc_b", "reads")  # another principal has its own bucket
    limiter.charge("svc_a", "writes")  # and another class
    clock.now = 0.5
    limiter.charge("svc_a", "reads")  # half a second at 2/s gave one token back
    with pytest.raises(Problem):
        limiter.charge("svc_a", "reads")
    clock.now = 100
    for _ in range(3):  # refilled up to the burst, not beyond
        limiter.charge("svc_a", "reads")
    with pytest.raises(Problem):
        limiter.charge("svc_a", "reads")


def test_check_takes_nothing_and_spend_never_refuses() -> None:
    clock = Clock()
    limiter = RateLimiter(
        {"unauthenticated": Limit(1, 2, "http.unauthenticated_rate_limit", "bad keys")}, clock=clock
    )
    limiter.check("203.0.113.7", "unauthenticated")
    for _ in range(5):  # past the burst: spend floors at an empty bucket
        limiter.spend("203.0.113.7", "unauthenticated")
    with pytest.raises(Problem) as refused:
        limiter.check("203.0.113.7", "unauthenticated")
    assert refused.value.extra == {"retry_after": 1, "rate_class": "unauthenticated"}
    assert "203.0.113.7 made more bad keys than http.unauthenticated_rate_limit" in refused.value.detail
    clock.now = 1.0  # one token back, not five owed
    limiter.check("203.0.113.7", "unauthenticated")


def test_the_table_of_buckets_is_bounded() -> None:
    limiter = RateLimiter({"reads": Limit(1, 1)}, tracked=3)
    for n in range(10):
        limiter.charge(f"p{n}", "reads")
    assert len(limiter) == 3
    limiter.charge("p0", "reads")  # forgotten: a full bucket again
