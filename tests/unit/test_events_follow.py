"""`lorebase events --follow` reconnects after the stream breaks, resuming after the last event it
printed (Last-Event-ID), and stops at a refusal the same request would get again."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lorebase.commands.feed import _events
from lorebase.problems import Problem


class Stream:
    """A client whose event streams are scripted: each connection yields frames, then raises."""

    def __init__(self, *connections: tuple[list[int], Problem | None]) -> None:
        self.connections = list(connections)
        self.asked: list[str] = []

    async def events(self, **arguments: Any) -> AsyncIterator[dict[str, Any]]:
        self.asked.append(arguments["last_event_id"])
        ids, failure = self.connections.pop(0)
        for sequence in ids:
            yield {"id": str(sequence), "event": "revision", "data": {"sequence": sequence}}
        if failure is not None:
            raise failure


def arguments(**more: Any) -> argparse.Namespace:
    values = {"domain": "supply", "branch": "main", "kinds": "", "last_event_id": "", "json": True}
    return argparse.Namespace(**{**values, "follow": True, "max": 0, **more})


async def test_follow_reconnects_after_failures_with_last_event_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = Problem(503, "unreachable", "the event stream ended")
    stream = Stream(([1, 2], broken), ([], broken), ([3], None), ([4], None))
    assert await _events(stream, arguments(max=4)) == 0  # type: ignore[arg-type]
    assert stream.asked == ["", "2", "2", "3"]  # two failures in a row did not end it
    assert capsys.readouterr().err.count("reconnecting in") == 2


async def test_follow_stops_at_a_refusal() -> None:
    stream = Stream(([1], Problem(401, "unauthenticated", "the credential is unknown or revoked")))
    with pytest.raises(Problem) as refused:
        await _events(stream, arguments())  # type: ignore[arg-type]
    assert refused.value.status == 401 and stream.asked == [""]


async def test_without_follow_a_broken_stream_is_an_error() -> None:
    stream = Stream(([1], Problem(503, "unreachable", "the event stream ended")))
    with pytest.raises(Problem):
        await _events(stream, arguments(follow=False))  # type: ignore[arg-type]
