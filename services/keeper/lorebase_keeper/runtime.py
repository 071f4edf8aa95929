"""What every keeper handler works with: the database, settings, Domains, auth, the committers (of
graph commits and of memory commands), rate limits, the planner statistics and the work that follows
a branch's head moving (`moves`), and the vault."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from lorebase.config import Settings
from lorebase.rate_limits import RateLimiter
from lorebase_keeper.access import Authenticator
from lorebase_keeper.domains import Domains
from lorebase_keeper.memory import MemoryCommitter
from lorebase_keeper.read_cache import ReadCache
from lorebase_keeper.vault import Vault
from lorebase_keeper.writes import BranchMoves, Committer, KeptCounts, PlannerStatistics
from lorebase_store import Database


class BackgroundTasks:
    """Tasks that outlive the call that started them (a schema change job,
    schema_changes/jobs.py), each by its name: kept here so that they run to their end, and
    cancelled when keeper stops (each says what it leaves behind)."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    def start(self, name: str, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
        self._tasks[name] = task
        task.add_done_callback(lambda _: self._tasks.pop(name, None))
        return task

    def get(self, name: str) -> asyncio.Task[Any] | None:
        """The running task of that name in this process, if any."""
        return self._tasks.get(name)

    def cancel(self, name: str) -> None:
        task = self._tasks.get(name)
        if task is not None:
            task.cancel()

    async def settled(self) -> None:
        """Wait until every task started so far has ended (tests)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await self.settled()


@dataclass(frozen=True)
class Runtime:
    db: Database
    settings: Settings
    domains: Domains
    auth: Authenticator
    committer: Committer
    memory: MemoryCommitter
    vault: Vault  # vault keys and sealing (lorebase_keeper.vault)
    limits: RateLimiter | None = None
    statistics: PlannerStatistics | None = None  # refreshed after large imports
    moves: BranchMoves = field(default_factory=BranchMoves)  # work after a head moved (writes/moves.py)
    # Answers of repeated reads, checked against the head (read_cache.py); none by default here.
    read_cache: ReadCache = field(default_factory=lambda: ReadCache(max_entries=0, ttl_s=0))
    # Told (Kind, Records done, Records in all) after each batch of a schema change's migration,
    # besides its log line (lorebase_keeper.schema_changes).
    schema_progress: list[Callable[[str, int, int], Awaitable[None]]] = field(default_factory=list)
    background: BackgroundTasks = field(default_factory=BackgroundTasks)
    # Resolve's value counts kept in this process (reads/value_counts.py), which a schema change
    # set's commit hands the counts of the Attributes it changed (writes/kept_counts.py): one, put
    # there by keeper's servicer; none, and a change set prepares no counts.
    kept_counts: list[KeptCounts] = field(default_factory=list)

    @classmethod
    def create(cls, db: Database, settings: Settings) -> Runtime:
        model = settings.model
        moves = BranchMoves()
        return cls(
            db=db,
            settings=settings,
            domains=Domains(db, settings),
            auth=Authenticator(
                db, ttl_s=model.keeper.auth.authz.grants_cache_ttl_s, oidc=model.keeper.auth.oidc
            ),
            committer=Committer(
                db,
                max_group=model.keeper.commit.max_group,
                bulk_statement_timeout_s=model.services.bulk_deadline_s,
                moves=moves,
            ),
            memory=MemoryCommitter(db, max_group=model.memory.commit.max_group),
            vault=Vault(db, model.webhooks),
            limits=RateLimiter.of(model.keeper.rate_limits),
            statistics=PlannerStatistics(db, nice=model.keeper.schema_changes.nice),
            moves=moves,
            read_cache=ReadCache(
                max_entries=model.keeper.read_cache.max_entries,
                ttl_s=model.keeper.auth.authz.grants_cache_ttl_s,
            ),
        )


__all__ = ["BackgroundTasks", "Runtime"]
