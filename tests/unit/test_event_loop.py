"""collection_paused (lorebase.event_loop): nested and overlapping holds keep the collector off
until the last one ends, and leave it as it was."""

from __future__ import annotations

import gc

from lorebase.event_loop import collection_paused


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
