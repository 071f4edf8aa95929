"""Schema change jobs (docs/schema.md, "Large migrations"): a change set sent with `Prefer:
respond-async` answers 202 with a job that commits the same Revision and answer as the synchronous
call, or fails with the same problem; a job is read only where its branch is; a keeper that starts
again (or stops) ends its running jobs, another keeper's go on, and a job whose keeper went silent
ends at its next read; the head never shows half a change set."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from lorebase_keeper.schema_changes import clear_staged, fail_abandoned
from sqlalchemy import text

from lorebase.clients import KeeperClient
from lorebase.ids import utc_now
from lorebase_store import NewSchemaJob, Txn
from tests.integration.conftest import Stack
from tests.integration.test_schema_batches import end_marks

D = "/api/v1/domains/supply"
CHANGES = D + "/branches/{}/schema/changes"
JOBS = D + "/schema/changes"
ASYNC = {"Prefer": "respond-async"}
CERTIFICATION = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "certification",
    "definition": {"type": "enum", "values": ["none", "iso9001"]},
    "backfill": {"expression": "'iso9001' if tier == 1 else 'none'"},
}
LEGAL_NAME_TO_INTEGER = {
    "op": "change_attribute",
    "kind": "Supplier",
    "attribute": "legal_name",
    "definition": {"type": "integer"},
}


async def post(stack: Stack, body: dict[str, Any], branch: str = "main", **headers: str) -> Any:
    return await stack.http.post(CHANGES.format(branch), json=body, headers={**stack.admin, **headers})


async def finished(stack: Stack, location: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The job once its task ended (what a client polling `Location` sees last)."""
    await stack.rt.background.settled()
    response = await stack.http.get(location, headers=headers or stack.admin)
    assert response.status_code == 200, response.text
    job = dict(response.json())
    assert job["status"] != "running", job
    return job


async def branch_row(stack: Stack, branch: str = "main") -> dict[str, Any]:
    response = await stack.http.get(f"{D}/branches/{branch}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json())


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """A change set's answer without what differs between two branches (names, Revision ids)."""
    return {k: v for k, v in document.items() if k not in ("branch", "revision", "head", "touches")}


async def test_a_job_commits_what_the_synchronous_call_commits_and_a_retry_answers_the_same_job(
    supply: Stack,
) -> None:
    made = await supply.http.post(
        D + "/branches", json={"name": "sync", "from": "main"}, headers=supply.admin
    )
    assert made.status_code == 201, made.text
    synchronous = await post(supply, {"changes": [CERTIFICATION]}, "sync")
    assert synchronous.status_code == 200, synchronous.text

    body = {"changes": [CERTIFICATION], "message": "Certification"}
    accepted = await post(supply, body, **ASYNC, **{"Idempotency-Key": "cert-1"})
    assert accepted.status_code == 202, accepted.text
    job = accepted.json()
    assert accepted.headers["Location"] == f"{JOBS}/{job['id']}" == job["href"]
    assert accepted.headers["Preference-Applied"] == "respond-async"
    assert job["status"] == "running" and job["domain"] == "supply" and job["branch"] == "main"
    assert job["created_by"] == "usr_admin" and job["result"] is None and job["dry_run"] is False

    done = await finished(supply, accepted.headers["Location"])
    assert done["status"] == "committed" and done["problem"] is None and done["finished_at"]
    result = done["result"]
    assert result["status"] == "committed" and result["revision"] == done["revision"]
    assert comparable(result) == comparable(synchronous.json())
    head = await branch_row(supply)
    assert head["head"] == done["revision"]
    revision = (await supply.http.get(f"{D}/revisions/{done['revision']}", headers=supply.admin)).json()
    assert revision["revision"]["schema_changed"] is True
    assert revision["revision"]["message"] == "Certification"
    s1001 = (await supply.http.get(D + "/kinds/Supplier/records/S-1001", headers=supply.admin)).json()
    assert s1001["values"]["certification"] == "iso9001"
    audits = await supply.count("audit_log where action = 'schema.change'")
    assert audits == 2  # the synchronous one and the job's

    # A retry under the same key answers the same job; another body under it is refused.
    again = await post(supply, body, **ASYNC, **{"Idempotency-Key": "cert-1"})
    assert again.status_code == 202 and again.json()["id"] == job["id"], again.text
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["status"] == "committed"
    other = await post(
        supply, {"changes": [CERTIFICATION], "message": "x"}, **ASYNC, **{"Idempotency-Key": "cert-1"}
    )
    assert other.status_code == 422 and other.json()["code"] == "idempotency-key-reused", other.text
    # The synchronous call under the key replays the job's receipt: one commit.
    replayed = await post(supply, body, **{"Idempotency-Key": "cert-1"})
    assert replayed.status_code == 200 and replayed.json()["revision"] == done["revision"], replayed.text
    assert replayed.json()["replayed"] is True
    assert (await branch_row(supply))["generation"] == head["generation"]

    listed = (await supply.http.get(JOBS, headers=supply.admin)).json()
    assert [j["id"] for j in listed["jobs"]] == [job["id"]] and listed["next_cursor"] is None
    assert (await supply.http.get(JOBS + "?branch=sync", headers=supply.admin)).json()["jobs"] == []


async def test_a_failing_migration_ends_the_job_failed_with_the_synchronous_problem(supply: Stack) -> None:
    before = await branch_row(supply)
    synchronous = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]})
    assert synchronous.status_code == 422, synchronous.text
    accepted = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, **ASYNC)
    assert accepted.status_code == 202, accepted.text
    done = await finished(supply, accepted.headers["Location"])
    assert done["status"] == "failed" and done["result"] is None and done["revision"] is None
    assert done["problem"] == synchronous.json()
    assert done["problem"]["code"] == "schema-migration-failed" and done["problem"]["records"]
    # A failed job keeps no idempotency key (a refused synchronous call keeps no receipt): a retry
    # under it runs again.
    keyed = {"Idempotency-Key": "to-integer"}
    first = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, **ASYNC, **keyed)
    assert (await finished(supply, first.headers["Location"]))["status"] == "failed"
    retried = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, **ASYNC, **keyed)
    assert retried.status_code == 202 and retried.json()["id"] != first.json()["id"], retried.text
    assert "Idempotent-Replayed" not in retried.headers
    assert (await finished(supply, retried.headers["Location"]))["problem"] == synchronous.json()
    # A change set that does not apply fails so too (422 validation-failed, its issues).
    unknown = {"op": "remove_attribute", "kind": "Supplier", "attribute": "nope"}
    sync_unknown = await post(supply, {"changes": [unknown]})
    accepted = await post(supply, {"changes": [unknown]}, **ASYNC)
    assert (await finished(supply, accepted.headers["Location"]))["problem"] == sync_unknown.json()
    assert await branch_row(supply) == before
    # A dry run may be a job too: its answer is the dry run's.
    dry = await post(supply, {"changes": [CERTIFICATION], "dry_run": True}, **ASYNC)
    assert dry.status_code == 202 and dry.json()["dry_run"] is True, dry.text
    done = await finished(supply, dry.headers["Location"])
    assert done["status"] == "dry_run" and done["result"]["status"] == "dry_run"
    assert done["result"]["migrated"]["records"] == 30 and done["revision"] is None
    assert await branch_row(supply) == before


async def test_prefer_values_other_than_respond_async_are_ignored(supply: Stack) -> None:
    body = {"changes": [CERTIFICATION], "dry_run": True}
    for prefer in (
        "respond-sync",
        "wait=abc",
        "handling=lenient, return=minimal",
        "respond-async-ish",
        ";;,",
    ):
        answered = await post(supply, body, Prefer=prefer)
        assert answered.status_code == 200, (prefer, answered.text)
        assert answered.json()["status"] == "dry_run" and "Preference-Applied" not in answered.headers
    # Case, parameters and other preferences beside it do not hide it.
    accepted = await post(supply, body, Prefer="return=minimal, RESPOND-ASYNC; x=1")
    assert accepted.status_code == 202, accepted.text
    await supply.rt.background.settled()


async def test_a_job_is_read_only_where_its_branch_may_be_read(supply: Stack) -> None:
    made = await supply.http.post(
        D + "/branches", json={"name": "work", "from": "main"}, headers=supply.admin
    )
    assert made.status_code == 201, made.text
    on_work = await post(supply, {"changes": [CERTIFICATION]}, "work", **ASYNC)
    on_main = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, **ASYNC)
    assert on_work.status_code == on_main.status_code == 202
    await supply.rt.background.settled()
    work_job, main_job = on_work.headers["Location"], on_main.headers["Location"]

    main_admin = await supply.principal("usr_main_admin")
    await supply.grant("supply", "usr_main_admin", "admin", branches=["main"])
    hidden = await supply.http.get(work_job, headers=main_admin)
    unknown = await supply.http.get(JOBS + "/scj_0000000000NOPE", headers=main_admin)
    assert hidden.status_code == unknown.status_code == 404, hidden.text
    assert hidden.json()["code"] == unknown.json()["code"] == "not-found"
    seen = await supply.http.get(main_job, headers=main_admin)
    assert seen.status_code == 200 and seen.json()["problem"]["records"], seen.text
    listed = (await supply.http.get(JOBS, headers=main_admin)).json()["jobs"]
    assert [j["href"] for j in listed] == [main_job]

    # A grant narrowed to Kinds, or one without the clearances: the job, but no value the
    # migration computed (it read every Kind and every value).
    narrowed = await supply.principal("usr_parts")
    await supply.grant("supply", "usr_parts", "viewer", kinds=["Part"])
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer")
    for caller in (narrowed, viewer):
        for location in (work_job, main_job):
            job = (await supply.http.get(location, headers=caller)).json()
            assert job["result"] is None and job["progress"] is None
        problem = (await supply.http.get(main_job, headers=caller)).json()["problem"]
        assert problem == {k: seen.json()["problem"][k] for k in ("type", "title", "status", "code")}

    # Another Domain's path, a caller with no grant in the Domain.
    other = await supply.http.get(work_job.replace("/supply/", "/elsewhere/"), headers=supply.admin)
    assert other.status_code == 404, other.text
    stranger = await supply.principal("usr_stranger")
    assert (await supply.http.get(main_job, headers=stranger)).status_code == 404
    # An editor without schema.change may read the job but not start one.
    editor = await supply.principal("usr_editor")
    refused = await supply.http.post(
        CHANGES.format("main"), json={"changes": [CERTIFICATION]}, headers={**editor, **ASYNC}
    )
    assert refused.status_code == 403, refused.text
    assert (await supply.http.get(JOBS, headers=editor)).json()["jobs"][0]["status"] == "failed"


async def test_a_keeper_that_starts_again_fails_its_running_jobs_and_their_commit_changes_nothing(
    batched: Stack,
) -> None:
    """The keeper running a job died (its staging's mark went with it) and starts again while the
    job's commit waits: it fails its jobs and clears their rows, and the commit changes nothing."""
    before = await branch_row(batched)

    async def keeper_again(running: dict[str, Any]) -> None:
        assert await end_marks(batched) == 1
        # What a keeper does as it starts (lorebase_keeper.server): fail the jobs, clear staged rows.
        assert await fail_abandoned(batched.rt) == [running["id"]]
        assert await clear_staged(batched.rt.db) > 0

    done = await job_while_its_commit_waits(batched, keeper_again)
    assert done["status"] == "failed" and done["problem"]["code"] == "schema-migration-moved"
    assert done["problem"]["reason"] == "abandoned" and done["problem"]["status"] == 409
    assert await branch_row(batched) == before
    assert await batched.count("staged_rows") == 0


async def test_another_keeper_that_starts_leaves_a_running_job_which_commits(batched: Stack) -> None:
    """A rolling restart: the other keeper starts while a job's commit waits; the job's keeper lives
    (its heartbeat fresh, its staging's mark held), so it is neither failed nor cleared, and commits."""
    before = await branch_row(batched)
    answer = {"type": "x", "title": "x", "status": 409, "detail": "x"}

    async def other_keeper_starts(running: dict[str, Any]) -> None:
        async def fail(txn: Txn) -> list[str]:
            return await txn.fail_abandoned_schema_jobs(owner="keeper-2/:50051", lease_s=60, answer=answer)

        staged = await batched.count("staged_rows")
        assert staged > 0
        assert await batched.rt.db.run_interaction("fail_abandoned", fail) == []
        assert await clear_staged(batched.rt.db) == 0
        assert await batched.count("staged_rows") == staged

    done = await job_while_its_commit_waits(batched, other_keeper_starts)
    assert done["status"] == "committed", done
    assert (await branch_row(batched))["generation"] == before["generation"] + 1
    assert await batched.count("staged_rows") == 0


async def job_while_its_commit_waits(
    stack: Stack, meanwhile: Callable[[dict[str, Any]], Awaitable[None]]
) -> dict[str, Any]:
    """A job (CERTIFICATION on main) once it ended, `meanwhile` run (with the running job) while its
    commit waited for the branch, held until then: its rows staged, its staging's mark held."""
    engine = stack.rt.db.engine
    lock_waits = text(
        "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
    )
    async with engine.connect() as holder, engine.connect() as watcher:
        watching = await watcher.execution_options(isolation_level="AUTOCOMMIT")
        # The branch held: the job stages, then its commit waits.
        await holder.execute(text("select 1 from branches where name = 'main' for update"))
        accepted = await post(stack, {"changes": [CERTIFICATION]}, **ASYNC)
        assert accepted.status_code == 202, accepted.text
        try:
            for _ in range(3000):
                if await watching.scalar(lock_waits):
                    break
                await asyncio.sleep(0.01)
            running = (await stack.http.get(accepted.headers["Location"], headers=stack.admin)).json()
            assert running["status"] == "running"
            await meanwhile(running)
        finally:
            await holder.rollback()
        return await finished(stack, accepted.headers["Location"])


async def test_a_stopping_keeper_fails_its_running_jobs(batched: Stack) -> None:
    before = await branch_row(batched)
    stopping: list[asyncio.Task[None]] = []

    async def stop_keeper(kind: str, done: int, total: int) -> None:
        if not stopping:  # after the first batch: keeper stops (lorebase_keeper.server's stop)
            stopping.append(asyncio.ensure_future(batched.rt.background.stop()))

    batched.rt.schema_progress.append(stop_keeper)
    try:
        accepted = await post(batched, {"changes": [CERTIFICATION]}, **ASYNC)
        assert accepted.status_code == 202, accepted.text
        done = await finished(batched, accepted.headers["Location"])
        await stopping[0]
    finally:
        batched.rt.schema_progress.remove(stop_keeper)
    assert done["status"] == "failed" and done["problem"]["reason"] == "keeper-stopped", done
    assert await branch_row(batched) == before and await batched.count("staged_rows") == 0


async def test_a_job_whose_keeper_went_silent_fails_when_read(supply: Stack) -> None:
    """A keeper that died and never started again: past the lease the job's next read fails it."""
    domain = await supply.rt.domains.get("supply")

    async def left(txn: Txn) -> None:
        job = NewSchemaJob(
            "scj_silent", domain.id, "main", True, "usr_admin", utc_now(), "gone/host:1", None, ""
        )
        await txn.insert_schema_job(job)
        await txn.conn.execute(
            text(
                "update schema_change_jobs set heartbeat_at = now() - interval '1 hour' where id = 'scj_silent'"
            )
        )

    await supply.rt.db.run_interaction("left_schema_job", left)
    job = (await supply.http.get(JOBS + "/scj_silent", headers=supply.admin)).json()
    assert job["status"] == "failed" and job["problem"]["reason"] == "abandoned", job
    assert job["problem"]["code"] == "schema-migration-moved"


async def test_a_job_whose_commit_holds_its_row_is_neither_failed_nor_waited_for(supply: Stack) -> None:
    """A job's commit marks it committed in the commit's transaction, which then writes its rows (a
    minute at a million Records): meanwhile its heartbeat cannot be renewed, and neither a read past
    the lease nor a starting keeper fails it or waits for it; once the commit is over (here it rolls
    back, as a failed commit would) the lease applies again."""
    domain = await supply.rt.domains.get("supply")
    held, release = asyncio.Event(), asyncio.Event()

    async def left(txn: Txn) -> None:
        job = NewSchemaJob(
            "scj_held", domain.id, "main", False, "usr_admin", utc_now(), "gone/host:1", None, ""
        )
        await txn.insert_schema_job(job)
        await txn.conn.execute(
            text(
                "update schema_change_jobs set heartbeat_at = now() - interval '1 hour' where id = 'scj_held'"
            )
        )

    async def commit(txn: Txn) -> None:  # what a job's commit holds while its rows are written
        await txn.conn.execute(text("select 1 from schema_change_jobs where id = 'scj_held' for update"))
        held.set()
        await release.wait()
        raise RuntimeError("rolled back")

    await supply.rt.db.run_interaction("left_schema_job", left)
    committing = asyncio.ensure_future(supply.rt.db.run_interaction("hold_schema_job", commit))
    await held.wait()
    try:
        job = (await supply.http.get(JOBS + "/scj_held", headers=supply.admin)).json()
        assert job["status"] == "running", job
        assert "scj_held" not in await fail_abandoned(supply.rt)  # what a starting keeper does
    finally:
        release.set()
        await asyncio.gather(committing, return_exceptions=True)
    job = (await supply.http.get(JOBS + "/scj_held", headers=supply.admin)).json()
    assert job["status"] == "failed" and job["problem"]["reason"] == "abandoned", job


async def test_bad_job_reads_answer_4xx_naming_what_to_change(supply: Stack) -> None:
    for path, parameter in (
        (JOBS + "/" + "x" * 65, "id"),
        (JOBS + "?limit=101", "limit"),
        (JOBS + "?limit=", "limit"),
    ):
        answer = await supply.http.get(path, headers=supply.admin)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["code"] == "invalid-parameter" and answer.json()["parameter"] == parameter
    cursor = await supply.http.get(JOBS + "?cursor=nope", headers=supply.admin)
    assert cursor.status_code == 400 and cursor.json()["code"] == "invalid-cursor", cursor.text
    before = await branch_row(supply)
    long = await post(supply, {"changes": [CERTIFICATION]}, Prefer="respond-async, " + "x" * 1024)
    assert long.status_code == 400 and long.json()["parameter"] == "Prefer", long.text
    unknown = await post(supply, {"changes": [CERTIFICATION]}, "nope", **ASYNC)
    assert unknown.status_code == 404, unknown.text
    assert (await supply.http.get(JOBS, headers=supply.admin)).json()["jobs"] == []  # nothing accepted
    assert await branch_row(supply) == before


async def test_a_change_set_that_outlives_the_gateways_deadline_commits_as_a_job(batched: Stack) -> None:
    """Issue 30's failure: the synchronous call answers 503 once the gateway's bulk deadline passes
    (and its change set, cancelled, changes nothing); the same change set as a job commits."""
    let_go = asyncio.Event()

    async def migrating(kind: str, done: int, total: int) -> None:  # a migration longer than 0.5 s
        await let_go.wait()

    gateway = batched.gateway
    keeper = gateway.keeper
    short = KeeperClient(dataclasses.replace(batched.keeper_address, bulk_deadline_s=0.5))
    gateway.connect(short, gateway.feed, gateway.scribe)
    batched.rt.schema_progress.append(migrating)
    before = await branch_row(batched)
    try:
        synchronous = await post(batched, {"changes": [CERTIFICATION]})
        assert synchronous.status_code == 503, synchronous.text
        assert await branch_row(batched) == before
        accepted = await post(batched, {"changes": [CERTIFICATION]}, **ASYNC)
        assert accepted.status_code == 202, accepted.text
        let_go.set()
        done = await finished(batched, accepted.headers["Location"])
    finally:
        let_go.set()
        batched.rt.schema_progress.remove(migrating)
        gateway.connect(keeper, gateway.feed, gateway.scribe)
        await short.close()
    assert done["status"] == "committed", done
    assert (await branch_row(batched))["head"] == done["revision"]
    assert await batched.count("staged_rows") == 0


def migration_pid(caplog: pytest.LogCaptureFixture) -> int:
    """The pid of the change set's migration process, as keeper logs it."""
    for record in reversed(caplog.records):
        found = re.search(r"migrating in process (\d+)", record.getMessage())
        if found:
            return int(found.group(1))
    raise AssertionError("keeper did not log its migration process")


async def test_a_migration_process_killed_midway_fails_the_job_and_changes_nothing(
    batched: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """The migration runs in a process of its own (schema_changes/process.py): killed (kill -9) while
    it migrates, or while its rows wait to be staged, the job ends failed with 409
    schema-migration-moved (`reason: migration-process`), the head as it was and no staged row left."""
    caplog.set_level(logging.INFO, logger="lorebase.keeper.schema_changes")
    before = await branch_row(batched)

    async def kill(kind: str, done: int, total: int) -> None:  # after its first batch
        os.kill(migration_pid(caplog), signal.SIGKILL)
        batched.rt.schema_progress.remove(kill)

    batched.rt.schema_progress.append(kill)
    try:
        accepted = await post(batched, {"changes": [CERTIFICATION]}, **ASYNC)
        assert accepted.status_code == 202, accepted.text
        job = await finished(batched, accepted.headers["Location"])
    finally:
        if kill in batched.rt.schema_progress:
            batched.rt.schema_progress.remove(kill)
    assert job["status"] == "failed", job
    problem = job["problem"]
    assert problem["status"] == 409 and problem["code"] == "schema-migration-moved", problem
    assert problem["reason"] == "migration-process" and "SIGKILL" in problem["detail"], problem
    assert await branch_row(batched) == before and await batched.count("staged_rows") == 0

    # Killed while its rows wait for a lock on staged_rows: keeper ends its session before the rows
    # are forgotten, so they never land.
    engine = batched.rt.db.engine
    waiting = text(
        "select count(*) from pg_stat_activity where application_name like 'schema-%' "
        "and datname = current_database() and wait_event_type = 'Lock'"
    )
    sessions = text(
        "select count(*) from pg_stat_activity where application_name like 'schema-%' "
        "and datname = current_database()"
    )
    async with engine.connect() as holder, engine.connect() as watcher:
        watching = await watcher.execution_options(isolation_level="AUTOCOMMIT")
        await holder.execute(text("lock table staged_rows in share mode"))
        accepted = await post(batched, {"changes": [CERTIFICATION]}, **ASYNC)
        assert accepted.status_code == 202, accepted.text
        for _ in range(3000):
            if await watching.scalar(waiting):
                break
            await asyncio.sleep(0.01)
        assert await watching.scalar(waiting) == 1
        os.kill(migration_pid(caplog), signal.SIGKILL)
        for _ in range(3000):
            if not await watching.scalar(sessions):
                break
            await asyncio.sleep(0.01)
        assert await watching.scalar(sessions) == 0  # ended by keeper, its rows never sent
        await holder.rollback()
    job = await finished(batched, accepted.headers["Location"])
    assert job["status"] == "failed" and job["problem"]["reason"] == "migration-process", job
    assert await branch_row(batched) == before and await batched.count("staged_rows") == 0
