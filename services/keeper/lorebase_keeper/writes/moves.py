"""Work that follows a branch's head moving, done in the background after the commit.

Some state depends on heads but must not slow the commit that moves them: an open Proposal's merge
attempt (whether it still merges, and its Conflicts) changes with every new source or target head.
The Committer and the merges report each branch whose head moved, after their transaction
committed; `BranchMoves` runs the listeners one branch at a time in one background task, and
coalesces: a branch that moves ten times while a check runs is checked once more, not ten times.
A listener's failure is logged and does not stop the others; nothing here is needed for
correctness of a write, only for how early its consequences are known.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger("lorebase.keeper.moves")

Listener = Callable[[int, str], Awaitable[None]]


class BranchMoves:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._pending: dict[tuple[int, str], None] = {}  # an ordered set
        self._task: asyncio.Task[None] | None = None

    def listen(self, listener: Listener) -> None:
        """Call `listener(domain_id, branch)` after a branch's head moved."""
        self._listeners.append(listener)

    def moved(self, domain_id: int, branch: str) -> None:
        """A branch's head moved (its transaction committed): run the listeners soon."""
        if not self._listeners:
            return
        self._pending[(domain_id, branch)] = None
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending:
            key = next(iter(self._pending))
            del self._pending[key]
            for listener in self._listeners:
                try:
                    await listener(*key)
                except Exception:
                    logger.warning(
                        "after branch %s of Domain %s moved: a listener failed", key[1], key[0], exc_info=True
                    )

    async def settled(self) -> None:
        """Wait until every move reported so far has been followed (tests, shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


__all__ = ["BranchMoves", "Listener"]
