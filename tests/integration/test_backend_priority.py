"""Background work on a PostgreSQL backend of lower CPU priority (lorebase_store.backend_priority): the
backend is lowered while the work runs, and its connection leaves the pool after it, so no later
transaction runs on a lowered backend."""

from __future__ import annotations

import asyncio
import os

import asyncpg

from lorebase_store import Database, Txn


async def _pid(txn: Txn) -> int:
    return int(await (await txn.driver()).fetchval("SELECT pg_backend_pid()"))


async def _gone(url: str, pid: int) -> bool:
    """Whether the backend `pid` has left (its connection closed), waiting a few seconds for it."""
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        for _ in range(100):
            if not await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid):
                return True
            await asyncio.sleep(0.05)
        return False
    finally:
        await conn.close()


async def test_a_lowered_backend_serves_its_work_only_and_then_leaves_the_pool(database_url: str) -> None:
    db = Database.connect(database_url, pool_size=1)
    try:
        seen: dict[str, int] = {}

        async def lowered(txn: Txn) -> int:
            await txn.lower_priority(7)
            pid = await _pid(txn)
            seen["during"] = os.getpriority(os.PRIO_PROCESS, pid)
            return pid

        ordinary = await db.run_interaction("ordinary", _pid)
        assert await db.run_interaction("ordinary", _pid) == ordinary  # a pooled connection is kept
        assert os.getpriority(os.PRIO_PROCESS, ordinary) == 0

        pid = await db.run_interaction("lowered", lowered)
        assert seen["during"] == 7
        assert await _gone(database_url, pid)  # dropped with its transaction
        after = await db.run_interaction("after", _pid)
        assert after != pid and os.getpriority(os.PRIO_PROCESS, after) == 0

        async def lowered_then_refused(txn: Txn) -> None:
            seen["refused"] = await _pid(txn)
            await txn.lower_priority(5)
            raise ValueError("refused")

        try:
            await db.run_interaction("refused", lowered_then_refused)
        except ValueError:
            pass
        assert await _gone(database_url, seen["refused"])  # a failed transaction's too

        await db.analyze(("records",), nice=5)  # maintenance at a lower priority, then dropped
        await db.merge_pending(("records_values",), nice=5)
        last = await db.run_interaction("last", _pid)
        assert os.getpriority(os.PRIO_PROCESS, last) == 0
    finally:
        await db.close()
