"""The commit path's statements through the asyncpg driver (lorebase_store.txn.TxnBase.driver): they
run inside the named transaction, the branch lock takes the outbox fence's xid, a driver error that
PostgreSQL reports as a serialization failure is retried like SQLAlchemy's, and a branch with no
open Proposal costs its move report one EXISTS."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from sqlalchemy import text

from lorebase_store import Txn
from tests.integration.conftest import Stack
from tests.integration.test_proposals import branch, propose


async def test_the_branch_lock_holds_the_rows_and_the_xid_until_the_transaction_ends(supply: Stack) -> None:
    """A commit group's lock takes every branch it writes, with the Records it names on each."""
    await branch(supply, "side")
    db = supply.rt.db
    other = await asyncpg.connect(supply.database_url)
    try:
        async with db.engine.begin() as conn:
            txn = Txn(conn)
            wanted = {"side": [("Supplier", "S-1002")], "main": [("Supplier", "S-1001")], "nope": []}
            locked, busy = await txn.lock_branches(1, wanted)
            assert sorted(locked) == ["main", "side"] and busy == [], "an unknown branch is left out"
            assert txn.outbox_xid_held
            for name, key in (("main", "S-1001"), ("side", "S-1002")):
                row, found = locked[name]
                assert row.name == name
                assert (
                    found is not None
                    and list(found) == [("Supplier", key)]
                    and found[("Supplier", key)].values
                )
            driver = await txn.driver()
            assert await driver.fetchval("SELECT pg_current_xact_id_if_assigned() IS NOT NULL")
            # The first statement went to the driver: the transaction began before it, so the
            # branch rows stay locked for another connection.
            for name in ("main", "side"):
                with pytest.raises(asyncpg.LockNotAvailableError):
                    await other.execute(
                        "SELECT 1 FROM branches WHERE domain_id = 1 AND name = $1 FOR UPDATE NOWAIT", name
                    )
        await other.execute("SELECT 1 FROM branches WHERE domain_id = 1 AND name = 'main' FOR UPDATE NOWAIT")
    finally:
        await other.close()


async def test_a_serialization_failure_of_the_driver_is_retried(stack: Stack) -> None:
    calls: list[int] = []

    async def flaky(txn: Txn) -> int:
        calls.append(1)
        driver = await txn.driver()
        if len(calls) == 1:
            raise asyncpg.SerializationError("could not serialize access")
        return int(await driver.fetchval("SELECT 7"))

    assert await stack.rt.db.run_interaction("flaky", flaky) == 7
    assert len(calls) == 2


async def test_any_open_proposal_names_its_source_and_its_target(supply: Stack) -> None:
    async def any_open(name: str) -> bool:
        return await supply.rt.db.read_one("any", lambda txn: txn.any_open_proposal_on(1, name))

    await branch(supply, "audit")
    await branch(supply, "other")
    assert not await any_open("main") and not await any_open("audit")
    proposal = await propose(supply, "audit")
    assert await any_open("audit") and await any_open("main") and not await any_open("other")
    closed = await supply.http.post(
        f"/api/v1/domains/supply/proposals/{proposal['id']}/close", headers=supply.admin
    )
    assert closed.status_code == 200, closed.text
    assert not await any_open("audit") and not await any_open("main")


async def test_connections_the_driver_found_closed_are_not_handed_out_again(stack: Stack) -> None:
    """After PostgreSQL dropped every connection (a restart), the first statement that finds its
    connection closed through the driver fails; the next ones get new connections (SQLAlchemy
    would have invalidated its pool on that disconnect: Database does it for the driver)."""
    db = stack.rt.db

    async def any_open() -> bool:
        return await db.read_one("any", lambda txn: txn.any_open_proposal_on(1, "main"))

    for _ in range(3):  # several pooled connections
        await asyncio.gather(*(any_open() for _ in range(3)))
    other = await asyncpg.connect(stack.database_url)
    try:
        await other.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await other.close()
    failed = 0
    for _ in range(3):
        try:
            assert await any_open() is False
        except Exception:
            failed += 1
    assert failed <= 1
    assert await any_open() is False


async def test_settings_sent_with_begin_hold_for_the_transaction_only(stack: Stack) -> None:
    """`driver(settings=...)` sends the transaction's SET LOCALs in BEGIN's round trip; the
    transaction is SQLAlchemy's as usual (committed by it), and the settings end with it. A setting
    that fails ends what BEGIN started: the connection goes back to the pool usable."""
    db = stack.rt.db

    async def settings(txn: Txn) -> tuple[str, str, bool]:
        driver = await txn.driver(settings="SET LOCAL synchronous_commit = off; SET LOCAL work_mem = '7MB'")
        await driver.execute("CREATE TEMP TABLE kept (n int) ON COMMIT DROP")
        return (
            await driver.fetchval("SHOW synchronous_commit"),
            await driver.fetchval("SHOW work_mem"),
            driver.is_in_transaction(),
        )

    assert await db.run_interaction("settings", settings) == ("off", "7MB", True)

    async def after(txn: Txn) -> tuple[str, bool]:
        driver = await txn.driver()
        return await driver.fetchval("SHOW work_mem"), driver.is_in_transaction()

    for _ in range(3):  # whichever pooled connection: the settings were local to that transaction
        assert (await db.run_interaction("after", after))[0] != "7MB"

    async def bad(txn: Txn) -> None:
        await txn.driver(settings="SET LOCAL no_such_setting_at_all = 1")

    with pytest.raises(asyncpg.PostgresError):
        await db.run_interaction("bad", bad)
    for _ in range(3):
        assert (await db.run_interaction("after", after))[1] is True  # a fresh transaction, no error


async def test_a_begin_that_never_finished_does_not_outlive_its_checkout(stack: Stack) -> None:
    """asyncpg marks a connection as in a transaction before it sends BEGIN and keeps the mark when
    the task awaiting BEGIN is cancelled (a client that went away): SQLAlchemy's adapter then holds
    no transaction to end, and every later transaction on that pooled connection was taken for a
    nested one. The next checkout drops the mark and ends the server's transaction."""
    db = stack.rt.db
    async with db.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver = raw.driver_connection
        assert driver is not None
        driver._top_xact = driver.transaction(isolation="repeatable_read")  # as a cancelled BEGIN leaves it
        await driver.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")  # which the server ran
    for _ in range(50):  # until the pool hands that connection out again
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            if raw.driver_connection is not driver or driver is None:
                continue
            assert driver._top_xact is None and not driver.is_in_transaction()
            await conn.begin()
            assert (
                await conn.scalar(text("SELECT current_setting('transaction_isolation')")) == "read committed"
            )
            await conn.commit()
            break
    else:
        raise AssertionError("the pool never handed the connection out again")

    async def through_the_driver(txn: Txn) -> int:
        return int(await (await txn.driver()).fetchval("SELECT 1"))

    for _ in range(12):  # every pooled connection serves named transactions
        assert await db.run_interaction("after", through_the_driver) == 1
