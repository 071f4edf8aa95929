"""Backoff between attempts: an exponential delay, and jitter so that what failed together does not
come back together (webhook deliveries that failed in one pass, clients refused by one 429).

`exponential(attempt, initial_s, max_s)` is `initial_s · 2^attempt`, at most `max_s`;
`jittered(delay_s, spread)` takes a random share of up to `spread` off it: `spread=1` is "full
jitter" (anywhere in [0, delay]), `spread=0.2` keeps a schedule one can document (in [0.8, 1]·delay).
"""

from __future__ import annotations

import random


def exponential(attempt: int, initial_s: float, max_s: float) -> float:
    """`initial_s · 2^attempt` seconds (attempt 0 waits `initial_s`), at most `max_s`."""
    return float(min(initial_s * 2 ** max(attempt, 0), max_s))


def jittered(delay_s: float, spread: float) -> float:
    """`delay_s` less a random share of up to `spread` of it (0 <= spread <= 1)."""
    return delay_s * (1.0 - spread * random.random())


__all__ = ["exponential", "jittered"]
