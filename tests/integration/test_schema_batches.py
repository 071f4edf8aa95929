"""A change set's migration in batches outside the branch's commit lock (docs/schema.md, "Large
migrations"): writes on the branch land while it runs and are migrated too (also into a renamed
Kind), a read meanwhile sees the whole old schema, and a violation found in a late batch, or in a write that landed meanwhile, refuses
the whole change set with nothing changed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from lorebase_keeper.schema_changes import clear_staged
from sqlalchemy import text

from lorebase_store import Txn
from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"
CHANGES = D + "/branches/main/schema/changes"
SUPPLIERS = D + "/kinds/Supplier/records/"
CERTIFICATION = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "certification",
    "definition": {"type": "enum", "values": ["none", "iso9001"]},
    "backfill": {"expression": "'iso9001' if tier == 1 else 'none'"},
}
RISK_AT_MOST_95 = {
    "op": "change_attribute",
    "kind": "Supplier",
    "attribute": "risk_score",
    "definition": {"type": "integer", "min": 0, "max": 95},
}


async def branch(stack: Stack) -> dict[str, Any]:
    response = await stack.http.get(D + "/branches/main", headers=stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def update(stack: Stack, key: str, **values: Any) -> str:
    response = await stack.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": key, **values}},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text
    return str(response.headers["Lorebase-Revision"])


async def staged_rows(stack: Stack) -> int:
    """The rows staged in the database for change sets not committed yet (lorebase_store.staged_rows)."""

    async def count(txn: Txn) -> int:
        return int((await txn.conn.execute(text("SELECT count(*) FROM staged_rows"))).scalar_one())

    return await stack.rt.db.run_interaction("count_staged_rows", count)


async def end_marks(stack: Stack) -> int:
    """What keeper's death does to its stagings' liveness marks (lorebase_store.staged_rows): the
    sessions holding the marks of the stagings in `staged_rows` end, each waited for until it is
    gone; how many."""

    async def end(txn: Txn) -> int:
        ended = await txn.conn.execute(
            text(
                "SELECT pg_terminate_backend(l.pid, 10000) FROM pg_locks l "
                "JOIN (SELECT DISTINCT staging FROM staged_rows) s "
                "ON ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(s.staging, 0) "
                "WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        )
        return len(ended.all())

    return await stack.rt.db.run_interaction("end_marks", end)


async def while_its_commit_waits(
    stack: Stack, change: dict[str, Any], meanwhile: Callable[[], Awaitable[None]]
) -> Any:
    """The answer to a change set (on main) whose commit waited for the branch, held from its first
    batch on, while `meanwhile` ran: its rows staged, its staging's mark held."""
    engine = stack.rt.db.engine
    lock_waits = text(
        "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
    )
    async with engine.connect() as holder, engine.connect() as watcher:
        watching = await watcher.execution_options(isolation_level="AUTOCOMMIT")

        async def hold_the_branch() -> None:  # the staging goes on; its commit will wait
            await holder.execute(text("select 1 from branches where name = 'main' for update"))

        listener = after_first_batch(stack, hold_the_branch)
        try:
            sent = asyncio.ensure_future(
                stack.http.post(CHANGES, json={"changes": [change]}, headers=stack.admin)
            )
            for _ in range(3000):
                if sent.done() or await watching.scalar(lock_waits):
                    break
                await asyncio.sleep(0.01)
            assert not sent.done(), sent.result().text
            try:
                await meanwhile()
            finally:
                await holder.rollback()
                answer = await sent
            return answer
        finally:
            stack.rt.schema_progress.remove(listener)


def after_first_batch(
    stack: Stack, step: Callable[[], Awaitable[None]], kind: str = "Supplier"
) -> Callable[..., Awaitable[None]]:
    """A progress listener that runs `step` once, after the first batch of `kind`."""
    ran: list[int] = []

    async def listener(migrated: str, done: int, total: int) -> None:
        if migrated == kind and not ran:
            ran.append(done)
            await step()

    stack.rt.schema_progress.append(listener)
    return listener


async def test_writes_during_a_batched_migration_land_and_are_migrated_and_violations_refuse_it(
    batched: Stack,
) -> None:
    before = await branch(batched)
    meanwhile: list[str] = []

    async def step() -> None:
        # A read while the migration runs: the old schema, whole.
        schema = (await batched.http.get(D + "/schema", headers=batched.admin)).json()
        supplier = next(k for k in schema["kinds"] if k["name"] == "Supplier")
        assert "certification" not in supplier["attributes"]
        s1001 = (await batched.http.get(SUPPLIERS + "S-1001", headers=batched.admin)).json()
        assert "certification" not in s1001["values"]
        # Writes on the branch commit meanwhile (the migration holds no lock): one on a Supplier the
        # first batch migrated already, one on a later one, one on another Kind, a new Supplier.
        meanwhile.append(await update(batched, "S-1004", tier=1, risk_score=11))
        meanwhile.append(await update(batched, "S-1025", tier=1))
        part = await batched.http.post(
            D + "/imports",
            json={
                "source": "test",
                "records": [
                    {
                        "kind": "Supplier",
                        "values": {
                            "supplier_code": "S-1031",
                            "legal_name": "Written Meanwhile Ltd",
                            "vat_number": "PL0000001031",
                            "country": "PL",
                            "tier": "1",
                        },
                    },
                    {"kind": "Part", "values": {"part_number": "P-90001", "name": "Meanwhile seal"}},
                ],
            },
            headers=batched.admin,
        )
        assert part.status_code == 200, part.text
        meanwhile.append(str(part.json()["revision"]))

    listener = after_first_batch(batched, step)
    try:
        response = await batched.http.post(CHANGES, json={"changes": [CERTIFICATION]}, headers=batched.admin)
    finally:
        batched.rt.schema_progress.remove(listener)
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(meanwhile) == 3 and body["migrated"]["records"] == 31
    after = await branch(batched)
    # Every write landed, then the change set in one Revision on top of them.
    assert after["head"] == body["revision"] and after["generation"] == before["generation"] + 4
    revision = (await batched.http.get(D + "/revisions/" + body["revision"], headers=batched.admin)).json()
    assert revision["revision"]["parents"] == [meanwhile[-1]]

    listing = await batched.http.get(
        D + "/kinds/Supplier/records", params={"limit": 100}, headers=batched.admin
    )
    assert listing.status_code == 200, listing.text
    values = {r["key"]: r["values"] for r in listing.json()["records"]}
    assert len(values) == 31 and all("certification" in v for v in values.values())
    # The Records written meanwhile are migrated from what was written, and keep the write.
    assert values["S-1004"]["certification"] == "iso9001" and values["S-1004"]["risk_score"] == "11"
    assert values["S-1025"]["certification"] == "iso9001"
    assert values["S-1031"]["certification"] == "iso9001"
    assert values["S-1005"]["certification"] == "none"
    part = await batched.http.get(D + "/kinds/Part/records/P-90001", headers=batched.admin)
    assert part.status_code == 200, part.text
    assert await staged_rows(batched) == 0  # staged, then written by its commit and gone with it

    # A renamed Kind (Part: 42 Records, 5 batches) takes the Records written meanwhile along.
    async def meanwhile_parts() -> None:  # a Part the first batch moved changes; a new one comes
        response = await batched.http.post(
            D + "/imports",
            json={
                "source": "test",
                "records": [
                    {"kind": "Part", "values": {"part_number": "P-10001", "name": "Renamed meanwhile"}},
                    {"kind": "Part", "values": {"part_number": "P-90002", "name": "Made meanwhile"}},
                ],
            },
            headers=batched.admin,
        )
        assert response.status_code == 200, response.text

    listener = after_first_batch(batched, meanwhile_parts, kind="Component")
    try:
        response = await batched.http.post(
            CHANGES,
            json={"changes": [{"op": "rename_kind", "kind": "Part", "to": "Component"}]},
            headers=batched.admin,
        )
    finally:
        batched.rt.schema_progress.remove(listener)
    assert response.status_code == 200, response.text
    listing = await batched.http.get(
        D + "/kinds/Component/records", params={"limit": 100}, headers=batched.admin
    )
    assert listing.status_code == 200, listing.text
    names = {r["key"]: r["values"]["name"] for r in listing.json()["records"]}
    assert (
        len(names) == 42 and names["P-10001"] == "Renamed meanwhile" and names["P-90002"] == "Made meanwhile"
    )
    gone = await batched.http.get(D + "/kinds/Part/records/P-10001", headers=batched.admin)
    assert gone.status_code == 404, gone.text

    # A value the new bound refuses, found in a late batch or written meanwhile, refuses it all.
    # A value the new bound refuses in the last batch (S-1029: Suppliers 21-30).
    await update(batched, "S-1029", risk_score=99)
    before = await branch(batched)
    kinds = (await batched.http.get(D + "/schema", headers=batched.admin)).json()["kinds"]
    late = await batched.http.post(CHANGES, json={"changes": [RISK_AT_MOST_95]}, headers=batched.admin)
    assert late.status_code == 422, late.text
    assert late.json()["records"] == ["Supplier/S-1029"]
    assert await branch(batched) == before
    dry = await batched.http.post(
        CHANGES,
        json={"changes": [CERTIFICATION | {"attribute": "audit"}], "dry_run": True},
        headers=batched.admin,
    )
    assert dry.status_code == 200 and dry.json()["migrated"]["records"] == 31, dry.text
    assert await staged_rows(batched) == 0 and await branch(batched) == before

    await update(batched, "S-1029", risk_score=50)

    async def refused_meanwhile() -> None:  # a Record the first batch found valid gets a refused value
        await update(batched, "S-1003", risk_score=97)

    listener = after_first_batch(batched, refused_meanwhile)
    try:
        caught = await batched.http.post(CHANGES, json={"changes": [RISK_AT_MOST_95]}, headers=batched.admin)
    finally:
        batched.rt.schema_progress.remove(listener)
    assert caught.status_code == 422, caught.text
    assert caught.json()["records"] == ["Supplier/S-1003"]
    now = await branch(batched)
    assert now["generation"] == before["generation"] + 2  # the two updates, no schema change
    assert (await batched.http.get(D + "/schema", headers=batched.admin)).json()["kinds"] == kinds
    assert await staged_rows(batched) == 0  # staged, refused at the commit, forgotten

    # What a keeper that stopped mid-staging left is cleared when a keeper starts.
    async def left(txn: Txn) -> None:
        row = ("schema-stopped", 0, "Supplier", "S-1001", "record", "modified", "[]", None, "{}", "{}")
        await txn.copy_staged_rows([(*row, None, None, False, b"[]", None)])

    await batched.rt.db.run_interaction("left_staged_rows", left)
    assert await staged_rows(batched) == 1
    assert await clear_staged(batched.rt.db) == 1 and await staged_rows(batched) == 0
    s1003 = (await batched.http.get(SUPPLIERS + "S-1003", headers=batched.admin)).json()
    assert s1003["values"]["risk_score"] == "97"

    # Its keeper gone (the session holding its staging's mark ended, as keeper's death ends it), a
    # keeper that starts while the change set waits for its commit clears its staged rows: the
    # commit finds them gone and answers 409 schema-migration-moved, nothing changed.
    before_move = await branch(batched)

    async def keeper_gone() -> None:
        assert await staged_rows(batched) > 0
        assert await end_marks(batched) == 1
        assert await clear_staged(batched.rt.db) > 0  # what a keeper does as it starts

    gone = await while_its_commit_waits(batched, CERTIFICATION | {"attribute": "audit"}, keeper_gone)
    assert gone.status_code == 409 and gone.json()["type"].endswith("/schema-migration-moved"), gone.text
    assert "staged rows are gone" in gone.json()["detail"]
    assert await branch(batched) == before_move and await staged_rows(batched) == 0


async def test_a_keeper_that_starts_clears_only_the_stagings_whose_keeper_is_gone(batched: Stack) -> None:
    """A staging's keeper holds its liveness mark until its rows are gone (lorebase_store.staged_rows):
    a keeper that starts (a rolling restart of the other keeper) leaves a live staging's rows, and
    its change set commits; rows whose mark is free go."""
    db = batched.rt.db
    row = ("", 0, "Supplier", "S-1001", "record", "modified", "[]", None, "{}", "{}")

    async def stage(txn: Txn) -> None:
        await txn.copy_staged_rows(
            [
                (staging, *row[1:], None, None, False, b"[]", None)
                for staging in ("schema-live", "schema-gone")
            ]
        )

    await db.run_interaction("stage_rows_of_two", stage)
    async with db.lease("schema-live") as held:  # what a change set's keeper holds (staged.py)
        assert held
        assert await clear_staged(db) == 1  # schema-gone's
        assert await staged_rows(batched) == 1
    assert await clear_staged(db) == 1 and await staged_rows(batched) == 0  # its keeper gone

    # A change set whose commit waits while a keeper starts: its rows stay, and it commits.
    before = await branch(batched)
    kept: list[int] = []

    async def keeper_starts() -> None:
        staged = await staged_rows(batched)
        assert staged > 0
        assert await clear_staged(db) == 0  # what a keeper does as it starts
        kept.extend([staged, await staged_rows(batched)])

    done = await while_its_commit_waits(batched, CERTIFICATION, keeper_starts)
    assert done.status_code == 200, done.text
    assert kept[0] == kept[1] and done.json()["migrated"]["records"] == 30
    after = await branch(batched)
    assert after["head"] == done.json()["revision"] and after["generation"] == before["generation"] + 1
    s1001 = (await batched.http.get(SUPPLIERS + "S-1001", headers=batched.admin)).json()
    assert s1001["values"]["certification"] == "iso9001"
    assert await staged_rows(batched) == 0


async def test_a_commit_holds_its_staged_rows_until_it_ends(batched: Stack) -> None:
    """A deletion of staged rows (a cancelled call forgetting its own, a keeper that starts clearing
    those whose keeper is gone) waits for the commit that counted them: it never lands between the
    count and the set statements, which would commit part of a migration
    (lorebase_store/staged_rows.py)."""
    db = batched.rt.db
    row = ("schema-held", 0, "Supplier", "S-1001", "record", "modified", "[]", None, "{}", "{}")

    async def stage(txn: Txn) -> None:
        await txn.copy_staged_rows(
            [
                (*row, None, None, False, b"[]", None),
                (*row[:3], "S-1002", *row[4:], None, None, False, b"[]", None),
            ]
        )

    await db.run_interaction("stage_held_rows", stage)
    counted: list[int] = []
    release = asyncio.Event()

    async def commit(txn: Txn) -> None:  # what a change set's commit does before its set statements
        counted.append(await txn.hold_staged_rows("schema-held"))
        await release.wait()
        counted.append(await txn.hold_staged_rows("schema-held"))

    async def forget(txn: Txn) -> None:
        await txn.forget_staged_rows("schema-held")

    committing = asyncio.ensure_future(db.run_interaction("hold_staged_rows", commit))
    advisory_waits = text(
        "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory' "
        "and datname = current_database()"
    )
    async with db.engine.connect() as watcher:
        watching = await watcher.execution_options(isolation_level="AUTOCOMMIT")
        for _ in range(3000):
            if counted:
                break
            await asyncio.sleep(0.01)
        deletions = [
            asyncio.ensure_future(db.run_interaction("forget_staged", forget)),
            asyncio.ensure_future(clear_staged(db)),
        ]
        for _ in range(3000):
            if await watching.scalar(advisory_waits) == 2:
                break
            await asyncio.sleep(0.01)
        assert not any(d.done() for d in deletions)  # both wait on the commit's locks
        release.set()
        await committing
        await asyncio.gather(*deletions)
    assert counted == [2, 2]
    assert await staged_rows(batched) == 0
