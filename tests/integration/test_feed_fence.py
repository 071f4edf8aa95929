"""The outbox fence: a reader never passes a sequence an in-flight transaction can still commit.

Real concurrent transactions on real PostgreSQL: each takes its sequence in start order and commits
or rolls back in a random order, and a reader that follows the outbox up to the fence between
every step must see exactly the committed events, each once, in sequence order.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncConnection

from lorebase.ids import utc_now
from lorebase_store import CommitRows, Database, Txn
from lorebase_store.fence import Fence

_DOMAINS = itertools.count(1_000_000)


@pytest_asyncio.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database.connect(database_url, pool_size=8)
    try:
        yield database
    finally:
        await database.close()


class Reader:
    """A follower of one Domain's outbox events: reads `cursor < sequence <= fence` after each step."""

    def __init__(self, db: Database, domain_id: int, start: int) -> None:
        self.db, self.domain_id, self.cursor = db, domain_id, start
        self.fence = Fence(safe=start)
        self.seen: list[int] = []

    async def poll(self) -> None:
        upto = await self.fence.advance(self.db)

        async def read(txn: Txn) -> list[int]:
            events = await txn.events_after(self.cursor, upto=upto, limit=1000, domain_id=self.domain_id)
            return [e.sequence for e in events]

        self.seen.extend(await self.db.read("follow", read))
        self.cursor = max(self.cursor, upto)


async def _write(conn: AsyncConnection, domain_id: int, n: int) -> None:
    rows = CommitRows(domain_id, "main")
    at = utc_now().isoformat()
    rows.events.append({"type": "revision.committed", "revision": None, "event": {"n": n}, "created_at": at})
    await Txn(conn).write_commit_rows(rows)


plans = st.integers(min_value=2, max_value=5).flatmap(
    lambda n: st.tuples(
        st.permutations(list(range(n))),  # the order in which the transactions finish
        st.lists(st.booleans(), min_size=n, max_size=n),  # commit (True) or roll back
        st.lists(st.booleans(), min_size=n, max_size=n),  # whether the reader polls after each start
    )
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plans)
async def test_no_reader_skips_a_sequence_that_commits_late(db: Database, plan: Any) -> None:
    finish_order, commits, poll_after_start = plan
    domain_id = next(_DOMAINS)
    start = await db.read_one("taken", lambda txn: txn.sequence_taken())
    reader = Reader(db, domain_id, start)
    conns: list[AsyncConnection] = []
    try:
        for n in range(len(finish_order)):
            conn = await db.engine.connect()
            conns.append(conn)
            await conn.begin()
            await _write(conn, domain_id, n)
            if poll_after_start[n]:
                await reader.poll()
        committed: list[int] = []
        for n in finish_order:
            if commits[n]:
                await conns[n].commit()
                committed.append(n)
            else:
                await conns[n].rollback()
            await reader.poll()
            # Whatever the reader has seen is in sequence order and committed.
            assert reader.seen == sorted(reader.seen)
    finally:
        for conn in conns:
            await conn.close()
    await reader.poll()
    sequences = await db.read(
        "committed",
        lambda txn: txn.events_after(start, upto=10**18, limit=1000, domain_id=domain_id),
    )
    assert [e.event["n"] for e in sequences] == sorted(committed)
    assert reader.seen == [e.sequence for e in sequences], "every committed event, once, in order"


async def test_the_fence_waits_for_an_open_transaction(db: Database) -> None:
    """The bare case: B (later sequence) commits while A is open; the fence stays below A."""
    domain_id = next(_DOMAINS)
    start = await db.read_one("taken", lambda txn: txn.sequence_taken())
    fence = Fence(safe=start)
    a = await db.engine.connect()
    b = await db.engine.connect()
    try:
        await a.begin()
        await _write(a, domain_id, 0)
        await b.begin()
        await _write(b, domain_id, 1)
        await b.commit()
        assert await fence.advance(db) == start, "A's sequence is still open"
        assert await fence.advance(db) == start
        await a.commit()
        assert await fence.advance(db) == start + 2
    finally:
        await a.close()
        await b.close()
