"""collection_paused (lorebase.event_loop): nested and overlapping holds keep the collector off
until the last one ends, and leave it as it was; watch_lag logs work that holds the loop."""

from __future__ import annotations

import asyncio
import gc
import logging
import time

from lorebase.event_loop import collection_paused, watch_lag


def test_holds_nest_and_overlap_and_restore_the_collector():
    assert gc.isenabled()
    outer = collection_paused()
    inner = collection_paused()
    outer.__enter__()
    assert not gc.isenabled()
    inner.__enter__()
    outer.__exit__(None, None, None)  # the first hold ends before the second (two requests)
    assert not gc.isenabled()
    inner.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_the_lag_probe_logs_work_that_holds_the_loop(caplog):
    """watch_lag: a step that computes without awaiting for 50 ms is logged, with the CPU it used."""
    caplog.set_level(logging.WARNING, logger="lorebase.event_loop")
    watch = asyncio.create_task(watch_lag(0.005))
    await asyncio.sleep(0.02)
    until = time.thread_time() + 0.05
    while time.thread_time() < until:  # on the CPU, holding the loop
        pass
    await asyncio.sleep(0.02)
    watch.cancel()
    held = [r.getMessage() for r in caplog.records if r.getMessage().startswith("event loop held")]
    assert held and any(float(m.split("(")[1].split(" ms")[0]) >= 40 for m in held), held
