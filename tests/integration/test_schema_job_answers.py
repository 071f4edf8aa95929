"""How a schema change job answers beyond its 202 (docs/schema.md, "Large migrations"): `Prefer:
respond-async, wait=N` answers the job's own result when it ends within N seconds (else 202), a
finished job is deleted past its retention (then 404), and a job's commit reaches the gateway's
read cache as a synchronous change set's does."""

from __future__ import annotations

import asyncio
from typing import Any

from lorebase_scribe.schema_jobs import purge_schema_jobs
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.test_schema_jobs import (
    CERTIFICATION,
    JOBS,
    LEGAL_NAME_TO_INTEGER,
    D,
    branch_row,
    comparable,
    finished,
    post,
)

RECORD = D + "/kinds/Supplier/records/S-1001"
STALE = {"Cache-Control": "max-stale=60"}
RETENTION_S = 7 * 24 * 3600.0


async def test_a_job_that_ends_within_its_wait_answers_as_the_synchronous_call(supply: Stack) -> None:
    made = await supply.http.post(
        D + "/branches", json={"name": "sync", "from": "main"}, headers=supply.admin
    )
    assert made.status_code == 201, made.text
    synchronous = await post(supply, {"changes": [CERTIFICATION]}, "sync")
    assert synchronous.status_code == 200, synchronous.text

    waited = await post(supply, {"changes": [CERTIFICATION]}, Prefer="respond-async, wait=60")
    assert waited.status_code == 200, waited.text
    assert waited.headers["Preference-Applied"] == "wait=60" and "Location" not in waited.headers
    assert comparable(waited.json()) == comparable(synchronous.json())
    assert waited.headers["Lorebase-Revision"] == waited.json()["revision"]
    assert (await branch_row(supply))["head"] == waited.json()["revision"]
    jobs = (await supply.http.get(JOBS, headers=supply.admin)).json()["jobs"]
    assert [j["status"] for j in jobs] == ["committed"] and jobs[0]["revision"] == waited.json()["revision"]

    # A failing change set answers its problem, as the synchronous call does; nothing changed.
    before = await branch_row(supply)
    refused = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, "sync")
    failed = await post(supply, {"changes": [LEGAL_NAME_TO_INTEGER]}, Prefer="wait=30; x, respond-async")
    assert failed.status_code == 422 and failed.headers["Preference-Applied"] == "wait=30", failed.text
    assert failed.headers["Content-Type"] == "application/problem+json"
    assert failed.json()["code"] == "schema-migration-failed" and failed.json()["records"]
    assert {k: v for k, v in failed.json().items() if k != "branch"} == {
        k: v for k, v in refused.json().items() if k != "branch"
    }
    assert await branch_row(supply) == before

    # A retry under the key of a committed job answers its result, replayed.
    keyed = {"Idempotency-Key": "cert-wait"}
    body = {"changes": [{**CERTIFICATION, "attribute": "audit"}]}
    first = await post(supply, body, Prefer="respond-async, wait=60", **keyed)
    again = await post(supply, body, Prefer="respond-async, wait=60", **keyed)
    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["revision"] == first.json()["revision"]
    assert again.headers["Idempotent-Replayed"] == "true" and again.headers["Preference-Applied"] == "wait=60"

    # wait=0, or a wait that does not parse: 202 at once, as before.
    for prefer in ("respond-async, wait=0", "respond-async, wait=soon", "respond-async, wait=-1"):
        answered = await post(supply, {"changes": [CERTIFICATION], "dry_run": True}, Prefer=prefer)
        assert answered.status_code == 202, (prefer, answered.text)
        assert answered.headers["Preference-Applied"] == "respond-async"
    await supply.rt.background.settled()


async def test_a_job_that_outlasts_its_wait_answers_202_saying_it_waited(batched: Stack) -> None:
    let_go = asyncio.Event()

    async def migrating(kind: str, done: int, total: int) -> None:
        await let_go.wait()

    batched.rt.schema_progress.append(migrating)
    try:
        accepted = await post(batched, {"changes": [CERTIFICATION]}, Prefer="respond-async, wait=1")
        assert accepted.status_code == 202, accepted.text
        assert accepted.headers["Preference-Applied"] == "respond-async, wait=1"
        assert accepted.json()["status"] == "running"
        assert accepted.headers["Location"] == accepted.json()["href"]
    finally:
        let_go.set()
        batched.rt.schema_progress.remove(migrating)
    assert (await finished(batched, accepted.headers["Location"]))["status"] == "committed"


async def _age(stack: Stack, job_id: str, days: int) -> None:
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text(
                "update schema_change_jobs set finished_at = now() - make_interval(days => :days) where id = :id"
            ),
            {"days": days, "id": job_id},
        )


async def test_finished_jobs_past_their_retention_are_deleted_and_then_answer_404(supply: Stack) -> None:
    jobs: dict[str, Any] = {}
    for name, change in (("old", CERTIFICATION), ("failed", LEGAL_NAME_TO_INTEGER), ("recent", None)):
        body = {"changes": [change or {**CERTIFICATION, "attribute": "audit"}]}
        accepted = await post(supply, body, Prefer="respond-async")
        assert accepted.status_code == 202, accepted.text
        jobs[name] = await finished(supply, accepted.headers["Location"])
    await _age(supply, jobs["old"]["id"], 8)
    await _age(supply, jobs["failed"]["id"], 30)
    await _age(supply, jobs["recent"]["id"], 6)
    head = await branch_row(supply)

    assert await purge_schema_jobs(supply.rt.db, RETENTION_S) == 2
    for name in ("old", "failed"):
        gone = await supply.http.get(jobs[name]["href"], headers=supply.admin)
        assert gone.status_code == 404 and gone.json()["code"] == "not-found", gone.text
        assert gone.headers["Content-Type"] == "application/problem+json"
    kept = await supply.http.get(jobs["recent"]["href"], headers=supply.admin)
    assert kept.status_code == 200 and kept.json()["status"] == "committed", kept.text
    listed = (await supply.http.get(JOBS, headers=supply.admin)).json()["jobs"]
    assert [j["id"] for j in listed] == [jobs["recent"]["id"]]
    # Only the job's row goes: its Revision, the branch and the audit row stay.
    assert await branch_row(supply) == head
    revision = await supply.http.get(f"{D}/revisions/{jobs['old']['revision']}", headers=supply.admin)
    assert revision.status_code == 200, revision.text
    assert await supply.count("audit_log where action = 'schema.change'") == 2
    assert await purge_schema_jobs(supply.rt.db, RETENTION_S) == 0


async def test_a_running_job_is_never_deleted(batched: Stack) -> None:
    let_go = asyncio.Event()

    async def migrating(kind: str, done: int, total: int) -> None:
        await let_go.wait()

    batched.rt.schema_progress.append(migrating)
    try:
        accepted = await post(batched, {"changes": [CERTIFICATION]}, Prefer="respond-async")
        assert accepted.status_code == 202, accepted.text
        async with batched.rt.db.engine.begin() as conn:  # as old as can be, but running
            await conn.execute(text("update schema_change_jobs set created_at = now() - interval '1 year'"))
        assert await purge_schema_jobs(batched.rt.db, 1.0) == 0
    finally:
        let_go.set()
        batched.rt.schema_progress.remove(migrating)
    assert (await finished(batched, accepted.headers["Location"]))["status"] == "committed"


async def test_a_jobs_commit_reaches_the_gateways_read_cache(batched: Stack) -> None:
    """A read that opted into staleness, cached while the job stages, is not served after the job
    committed once the gateway has answered the job as committed (as a synchronous change set's
    answer clears it), nor after a waited answer."""
    cache = batched.gateway.read_cache
    assert cache is not None
    let_go = asyncio.Event()

    async def migrating(kind: str, done: int, total: int) -> None:
        await let_go.wait()

    batched.rt.schema_progress.append(migrating)
    try:
        accepted = await post(batched, {"changes": [CERTIFICATION]}, Prefer="respond-async")
        assert accepted.status_code == 202, accepted.text
        # Cached while it stages: the old schema's values.
        cached = await batched.http.get(RECORD, headers={**batched.admin, **STALE})
        assert "certification" not in cached.json()["values"]
        hit = await batched.http.get(RECORD, headers={**batched.admin, **STALE})
        assert hit.headers["Lorebase-Cache"] == "hit"
    finally:
        let_go.set()
        batched.rt.schema_progress.remove(migrating)
    done = await finished(batched, accepted.headers["Location"])
    assert done["status"] == "committed"
    after = await batched.http.get(RECORD, headers={**batched.admin, **STALE})
    assert after.headers["Lorebase-Cache"] == "miss", after.headers
    assert after.json()["values"]["certification"] == "iso9001"
    assert after.json()["revision"] == done["revision"]
    assert "lorebase-committed" not in {k.lower() for k in after.headers}
    # Hearing of the same commit again (another read of the job) keeps what was cached since.
    again = await batched.http.get(done["href"], headers=batched.admin)
    assert "lorebase-committed" not in {k.lower() for k in again.headers}
    assert (await batched.http.get(RECORD, headers={**batched.admin, **STALE})).headers[
        "Lorebase-Cache"
    ] == "hit"

    # A change set waited for: its answer passing through the gateway clears it, as a synchronous one.
    audit = {**CERTIFICATION, "attribute": "audit"}
    waited = await post(batched, {"changes": [audit]}, Prefer="respond-async, wait=60")
    assert waited.status_code == 200, waited.text
    fresh = await batched.http.get(RECORD, headers={**batched.admin, **STALE})
    assert fresh.headers["Lorebase-Cache"] == "miss" and fresh.json()["values"]["audit"] == "iso9001"
