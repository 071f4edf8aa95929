"""Group commit: writers queued under one key share a group; a failed group runs again item by item."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from lorebase_keeper.writes import GroupQueue


@dataclass
class Item:
    name: str
    future: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Groups:
    """A run_group that records its groups; groups holding `breaks` fail as a whole."""

    def __init__(self, breaks: str = "") -> None:
        self.seen: list[tuple[str, list[str]]] = []
        self.breaks = breaks
        self.release = asyncio.Event()

    async def __call__(self, key: str, group: list[Item]) -> list[tuple[Item, Any, BaseException | None]]:
        self.seen.append((key, [item.name for item in group]))
        await self.release.wait()
        names = [item.name for item in group]
        if self.breaks in names and len(names) > 1:
            raise RuntimeError("the transaction failed")
        return [
            (item, None, ValueError(item.name))
            if item.name == self.breaks
            else (item, item.name.upper(), None)
            for item in group
        ]


async def test_writers_queued_while_a_group_runs_share_the_next_group() -> None:
    groups = Groups()
    queue: GroupQueue[str, Item] = GroupQueue("test", groups, max_group=3, logger=logging.getLogger("test"))
    items = [Item(name) for name in "abcdef"]
    queue.put("k", items[0])
    await asyncio.sleep(0)  # the first group starts with "a" alone
    for item in items[1:]:
        queue.put("k", item)
    other = Item("x")
    queue.put("other key", other)  # another key has groups of its own, at the same time
    groups.release.set()
    assert await asyncio.gather(*(i.future for i in items)) == ["A", "B", "C", "D", "E", "F"]
    assert await other.future == "X"
    assert [names for key, names in groups.seen if key == "k"] == [["a"], ["b", "c", "d"], ["e", "f"]]
    assert ("other key", ["x"]) in groups.seen


async def test_a_group_that_fails_runs_again_one_item_at_a_time(caplog: pytest.LogCaptureFixture) -> None:
    groups = Groups(breaks="b")
    groups.release.set()
    queue: GroupQueue[str, Item] = GroupQueue("test", groups, max_group=8, logger=logging.getLogger("test"))
    items = [Item(name) for name in "abc"]
    for item in items:
        queue.put("k", item)
    results = await asyncio.gather(*(i.future for i in items), return_exceptions=True)
    assert results[0] == "A" and results[2] == "C"
    assert isinstance(results[1], ValueError)  # only the item that breaks its group fails
    assert groups.seen == [("k", ["a", "b", "c"]), ("k", ["a"]), ("k", ["b"]), ("k", ["c"])]
    assert "retrying one test at a time" in caplog.text


async def test_an_item_that_runs_alone_has_a_group_of_its_own() -> None:
    groups = Groups()
    queue: GroupQueue[str, Item] = GroupQueue(
        "test", groups, max_group=8, logger=logging.getLogger("test"), alone=lambda item: item.name == "S"
    )
    items = [Item(name) for name in "abScd"]
    queue.put("k", items[0])
    await asyncio.sleep(0)
    for item in items[1:]:
        queue.put("k", item)
    groups.release.set()
    assert await asyncio.gather(*(i.future for i in items)) == ["A", "B", "S", "C", "D"]
    assert [names for _, names in groups.seen] == [["a"], ["b"], ["S"], ["c", "d"]]
