"""lorebase_keeper.writes.pace: sorted_paced sorts as sorted() does (stable, by key) in slices; a
Pacer's duty is a share of the time; a Pacer below duty 1 sleeps, one at duty 1 only yields."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lorebase_keeper.writes import pace
from lorebase_keeper.writes.pace import Pacer, sorted_paced


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Part", "Supplier", "PurchaseOrder"]), st.integers(0, 30))))
async def test_sorted_paced_sorts_as_sorted_does_stably(items: list[tuple[str, int]]) -> None:
    keyed = [(kind, number, index) for index, (kind, number) in enumerate(items)]  # the index: stability
    old = pace._RUN
    pace._RUN = 3  # many runs to merge
    try:
        got = await sorted_paced(keyed, lambda item: (item[0], item[1]), Pacer(slice_s=0))
    finally:
        pace._RUN = old
    assert got == sorted(keyed, key=lambda item: (item[0], item[1]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Part", "Supplier"]), st.integers(0, 5))), st.integers(0, 3))
async def test_sorted_paced_of_runs_in_order_is_their_concatenation(
    items: list[tuple[str, int]], swaps: int
) -> None:
    """Items in key order, or nearly (a load listing its records by key): equal keys across two runs
    keep their order, and a pair out of order still gets the merge."""
    ordered = sorted(items)
    for index in range(min(swaps, len(ordered) - 1)):
        ordered[index], ordered[-1 - index] = ordered[-1 - index], ordered[index]
    keyed = [(kind, number, index) for index, (kind, number) in enumerate(ordered)]
    old = pace._RUN
    pace._RUN = 3
    try:
        got = await sorted_paced(keyed, lambda item: (item[0], item[1]), Pacer(slice_s=0))
    finally:
        pace._RUN = old
    assert got == sorted(keyed, key=lambda item: (item[0], item[1]))


@pytest.mark.parametrize("duty", [0, -0.5, 1.5])
def test_a_duty_is_a_share_of_the_time(duty: float) -> None:
    with pytest.raises(ValueError, match="duty"):
        Pacer(duty)


async def test_below_duty_one_a_pacer_sleeps_and_at_one_it_only_yields() -> None:
    paced, flat = Pacer(0.5, slice_s=0), Pacer(1.0, slice_s=0)
    for _ in range(3):
        await paced.step()
        await flat.step()
    assert paced.paused_s > 0 and flat.paused_s == 0


async def test_due_says_when_step_would_pause() -> None:
    """A loop asks `due()` before each `await step()`: false within a slice (step would return at
    once), true once a slice has passed, false again after the pause."""
    pacer = Pacer(0.5, slice_s=3600)
    assert not pacer.due()
    await pacer.step()
    assert pacer.paused_s == 0
    pacer.slice_s = 0
    assert pacer.due()
    await pacer.step()
    assert pacer.paused_s >= 0
    pacer.slice_s = 3600
    assert not pacer.due()
