"""Token buckets per principal and class."""

from __future__ import annotations

import pytest
from lorebase_keeper.rate_limits import Limit, RateLimiter

from lorebase.problems import Problem


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
