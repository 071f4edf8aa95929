"""Group commit: writes that serialize on one lock (a branch, a memory journal) share transactions.

Writers that queue under one key are handed to `run_group(key, group)` in groups of at most
`max_group`, one group of a key at a time: while a group's transaction runs, the next writers
gather, and the next group takes them all. One transaction (and one WAL flush) then serves a whole
group instead of one writer, and no writer waits for the round trips of each writer before it.

`run_group` answers each item's result or error (one refused item leaves the others intact), or
puts an item under another key (`put`: the commits of a busy branch go to the branch's own queue).
When it fails as a whole, each item of the group runs again in a group of its own, so one item that
breaks a transaction fails alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
I = TypeVar("I", bound="Queued")  # noqa: E741 - the item type

Outcomes = list[tuple[I, Any, BaseException | None]]


class Queued(Protocol):
    """An item of a group: its writer awaits the future."""

    future: asyncio.Future[Any]


class GroupQueue(Generic[K, I]):
    def __init__(
        self,
        name: str,
        run_group: Callable[[K, list[I]], Awaitable[Outcomes[I]]],
        *,
        max_group: int,
        logger: logging.Logger,
        alone: Callable[[I], bool] | None = None,
    ) -> None:
        self.name = name
        self.run_group = run_group
        self.max_group = max(1, max_group)
        self.logger = logger
        self.alone = alone
        self._queues: dict[K, list[I]] = {}
        self._draining: set[K] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def put(self, key: K, item: I) -> None:
        """Queue `item` under `key`: it goes in the key's next group, which settles its future."""
        self._queues.setdefault(key, []).append(item)
        if key not in self._draining:
            self._draining.add(key)
            task = asyncio.get_running_loop().create_task(self._drain(key))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def waiting(self, key: K) -> int:
        """How many items under `key` wait for a group (not counting the group that runs)."""
        return len(self._queues.get(key, ()))

    async def _drain(self, key: K) -> None:
        try:
            while self._queues.get(key):
                queue = self._queues[key]
                size = self._group_size(queue)
                group, self._queues[key] = queue[:size], queue[size:]
                await self._run(key, group)
        finally:
            self._draining.discard(key)
            if not self._queues.get(key):
                self._queues.pop(key, None)

    def _group_size(self, queue: list[I]) -> int:
        """How many of the queue's first items form the next group."""
        if self.alone is None:
            return self.max_group
        for index, item in enumerate(queue[: self.max_group]):
            if self.alone(item):
                return max(index, 1)
        return self.max_group

    async def _run(self, key: K, group: list[I]) -> None:
        try:
            outcomes = await self.run_group(key, group)
        except Exception as exc:  # the transaction itself failed: try each on its own
            self.logger.warning(
                "%s group of %d on %s failed (%s); retrying one %s at a time",
                self.name,
                len(group),
                key,
                exc,
                self.name,
            )
            if len(group) > 1:
                for item in group:
                    await self._run(key, [item])
                return
            if not group[0].future.done():
                group[0].future.set_exception(exc)
            return
        for item, result, error in outcomes:
            if item.future.done():
                continue
            if error is not None:
                item.future.set_exception(error)
            else:
                item.future.set_result(result)


__all__ = ["GroupQueue", "Queued"]
