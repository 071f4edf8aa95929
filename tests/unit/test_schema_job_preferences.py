"""The Prefer header of a change set (RFC 7240; lorebase_keeper.schema_changes.jobs.preferences):
`respond-async` and `wait=N` wherever they stand, anything else ignored, and nothing raises."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lorebase_keeper.schema_changes import Preferences, preferences


def test_respond_async_and_wait_are_read_wherever_they_stand() -> None:
    assert preferences("") == Preferences()
    assert preferences("respond-async") == Preferences(True, None)
    assert preferences("respond-async, wait=10") == Preferences(True, 10)
    assert preferences('wait="30"; x=1, return=minimal, RESPOND-ASYNC') == Preferences(True, 30)
    assert preferences("wait=5") == Preferences(False, 5)  # the caller decides what wait alone means
    for ignored in ("wait=0", "wait=-1", "wait=soon", "wait=1e3", "wait=", "wait=1234567890"):
        assert preferences(f"respond-async, {ignored}") == Preferences(True, None), ignored
    assert preferences("respond-async-ish, handling=lenient") == Preferences()


@given(st.text(max_size=200))
def test_any_header_reads_without_raising(header: str) -> None:
    found = preferences(header)
    assert found.wait is None or 0 < found.wait < 10**9
