"""Schema change jobs: a change set whose client chose not to wait (`Prefer: respond-async`).

A change set over millions of Records takes minutes, longer than a client, a proxy or the gateway's
`services.bulk_deadline_s` will hold a request open. Sent with `Prefer: respond-async` (RFC 7240),
it is accepted at once: the job is written to `schema_change_jobs` (lorebase_store.schema_jobs)
and answered 202 with its `Location`, and the keeper that accepted it runs the change set in a
background task of its own (`Runtime.background`), with its own deadline, not the call's
(`keeper.schema_changes.job_deadline_s`, checked between its batches: a commit under way is never
cut short, since a half-cancelled commit is what must not happen). It runs the same
`change_schema` as the synchronous call, so staging, catch-up, commit, receipt, audit and event
are that call's; only the waiting differs. Any keeper answers `GET .../schema/changes/{id}` from the table.

A job never stays `running` and never leaves a half-migrated head:

- its commit transaction marks it `committed` (with the answer) only while it is still running,
  else it rolls back (409 schema-migration-moved): whoever marks it first wins;
- the task marks it `dry_run` or `failed` (with the problem the synchronous call answers) when the
  change set answers, or `failed` when its deadline passes or keeper stops (the staging stops at
  its next batch, and nothing was written);
- the task renews its heartbeat (and progress) every `job_heartbeat_s`; a keeper that starts fails
  every running job it ran itself before it stopped (its `owner`: host and listen address), and
  every one whose heartbeat is older than `job_lease_s`; a read of a job whose heartbeat is that old
  fails it too. The jobs of another keeper that lives go on: their staged rows stay (staged/staging.py,
  `staging_alive`). A task whose job was failed so stops at its next heartbeat.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec

from lorebase.contract.branches import SchemaChangeSet
from lorebase.contract.policy import CLEARANCES, Permission, clearance
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.event_loop import collection_paused
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes.change import JobTracking, change_schema
from lorebase_keeper.writes import Outcome, idempotency_key, request_digest
from lorebase_store import NewSchemaJob, SchemaJobRow, Txn

logger = logging.getLogger("lorebase.keeper.schema_changes")

DEFAULT_LIMIT = 20
_HIDDEN = ("type", "title", "status", "code")  # what a caller who reads not every value sees of a problem


@dataclass(frozen=True)
class Preferences:
    """What a Prefer header (RFC 7240) asks of a change set: `respond-async` (a job), and `wait`,
    the seconds the client will wait for the job's own answer (None: not said, or not a number)."""

    respond_async: bool = False
    wait: int | None = None


_WAIT = re.compile(r"[0-9]{1,9}")


def preferences(prefer: str) -> Preferences:
    """The preferences of a Prefer header that apply here; other preferences, parameters, and
    anything that does not parse, are ignored (`wait=0`, like no wait, answers 202 at once)."""
    respond_async, wait = False, None
    for preference in prefer.split(","):
        token, _, value = preference.split(";", 1)[0].partition("=")
        token, value = token.strip().lower(), value.strip().strip('"')
        if token == "respond-async":
            respond_async = True
        elif token == "wait" and _WAIT.fullmatch(value) and int(value) > 0:
            wait = int(value)
    return Preferences(respond_async, wait)


def owner_of(rt: Runtime) -> str:
    """The keeper a job runs in, the same across its restarts: its host and listen address."""
    return f"{socket.gethostname()}/{rt.settings.model.services.keeper.listen}"


def stopped(branch: str, why: str, reason: str) -> Problem:
    """The problem of a job that ended before its change set answered; nothing changed."""
    return Problem(
        409,
        "schema-migration-moved",
        f"the change set's job on branch {branch!r} stopped before it committed: {why}; nothing "
        "changed, send the change set again",
        branch=branch,
        reason=reason,
    )


def href(domain: Domain, job_id: str) -> str:
    return f"/api/v1/domains/{domain.name}/schema/changes/{job_id}"


async def accept(
    rt: Runtime,
    access: Access,
    domain: Domain,
    branch: str,
    body: SchemaChangeSet,
    header_key: str,
    *,
    wait: int | None = None,
) -> Outcome:
    """POST .../schema/changes with `Prefer: respond-async`: 202 with the job, started; a retry
    under the same idempotency key answers the job it started (another request: 422). With `wait`
    (`Prefer: respond-async, wait=N`), the call first waits up to that many seconds (at most
    `job_wait_max_s`) for a job this keeper runs, and answers as the synchronous call does when the
    job ended by then."""
    branch = check_branch_name(branch or domain.default_branch)
    key = idempotency_key(body.idempotency_key, header_key)
    digest = request_digest({"change_schema": msgspec.to_builtins(body), "branch": branch})
    job = NewSchemaJob(
        new_id("scj"),
        domain.id,
        branch,
        body.dry_run,
        access.principal.id,
        utc_now(),
        owner_of(rt),
        key,
        digest,
    )

    async def create(txn: Txn) -> tuple[SchemaJobRow, bool]:
        if await txn.get_branch(domain.id, branch) is None:
            raise Problem(404, "not-found", f"unknown branch {branch!r}; GET /branches lists them")
        while True:  # the job holding the key may let go of it (failed) between the two statements
            row = await txn.insert_schema_job(job)
            if row is not None:
                return row, False
            assert key is not None
            found = await txn.schema_job_by_key(domain.id, job.created_by, key)
            if found is not None:
                return found, True

    row, replayed = await rt.db.run_interaction("schema_job_accept", create)
    headers = {"Location": href(domain, row.id), "Preference-Applied": "respond-async"}
    if replayed:
        if row.request_digest != digest:
            raise Problem(
                422,
                "idempotency-key-reused",
                f"the idempotency key {key!r} was used for another request; use a new key for new parameters",
                idempotency_key=key,
            )
        headers["Idempotent-Replayed"] = "true"
        task = rt.background.get(row.id)
    else:
        task = rt.background.start(row.id, _run(rt, access, domain, branch, body, header_key, row.id))
        logger.info("schema change on %s: job %s accepted", branch, row.id)
    if wait is not None and (task is not None or row.status != "running"):
        waited = min(wait, int(rt.settings.model.keeper.schema_changes.job_wait_max_s))
        row = await _waited(rt, domain, row, task, waited)
        if row.status != "running":
            kept = {k: v for k, v in headers.items() if k != "Location"}  # the answer, not the job
            return _answered(row, {**kept, "Preference-Applied": f"wait={waited}"})
        headers["Preference-Applied"] = f"respond-async, wait={waited}"
    return Outcome(202, describe(domain, row, full=reads_every_value(access, branch)), None, headers)


async def _waited(
    rt: Runtime, domain: Domain, row: SchemaJobRow, task: asyncio.Task[Any] | None, wait_s: int
) -> SchemaJobRow:
    """The job after its task in this keeper ended, or `wait_s` passed (the task goes on: a wait
    that is cut short, by the time or by the caller leaving, never cancels it)."""
    if row.status != "running" or task is None:
        return row
    await asyncio.wait([task], timeout=wait_s)

    async def read(txn: Txn) -> SchemaJobRow | None:
        return await txn.get_schema_job(domain.id, row.id)

    found = await rt.db.run_interaction("schema_job_waited", read)
    return row if found is None else found


def _answered(row: SchemaJobRow, headers: dict[str, str]) -> Outcome:
    """A finished job answered as its synchronous call answers: the change set's answer (its
    status and document), or its problem (status and problem details)."""
    assert row.answer_status is not None and row.answer is not None
    return Outcome(row.answer_status, row.answer, row.revision, headers)


async def _run(
    rt: Runtime,
    access: Access,
    domain: Domain,
    branch: str,
    body: SchemaChangeSet,
    header_key: str,
    job_id: str,
) -> None:
    """The job's task: the change set in a task of its own, which is never cancelled (a
    cancelled wait for its commit would forget its staged rows while the commit may still apply
    them); a stop is asked (`JobTracking.stop`, the deadline) and honoured between its batches."""
    limits = rt.settings.model.keeper.schema_changes
    tracking = JobTracking(job_id, time.monotonic() + limits.job_deadline_s)
    loop = asyncio.get_running_loop()
    # Its objects live until it commits, as a bulk call's do (api/servicer.py): no collection walks
    # a million of them meanwhile.
    with collection_paused():
        work = loop.create_task(change_schema(rt, access, domain, branch, body, header_key, tracking))
        beating = loop.create_task(_beat(rt, tracking, limits.job_heartbeat_s))
        try:
            await asyncio.wait([work])  # a cancelled wait leaves the work running
        except asyncio.CancelledError:
            # keeper stops: the staging stops at its next batch; a commit under way completes.
            tracking.stop = stopped(branch, "its keeper stopped", "keeper-stopped")
            await asyncio.wait([work])
            await _finish(rt, job_id, _outcome(work, job_id))
            raise
        finally:
            beating.cancel()
    await _finish(rt, job_id, _outcome(work, job_id))


def _outcome(work: asyncio.Task[Outcome], job_id: str) -> Outcome | Problem:
    error = work.exception()
    if error is None:
        return work.result()
    if isinstance(error, Problem):
        return error
    logger.error("schema change job %s failed", job_id, exc_info=error)
    return Problem(500, "internal", "the change set failed in keeper; its log says why")


async def _finish(rt: Runtime, job_id: str, outcome: Outcome | Problem) -> None:
    """Record how the change set answered, unless the job ended already (its commit marked it
    committed, or it was failed meanwhile)."""
    if isinstance(outcome, Problem):
        status, code, answer, revision = "failed", outcome.status, outcome.document(), None
    else:
        status, code, answer = str(outcome.document["status"]), outcome.status, outcome.document
        revision = outcome.revision

    async def finish(txn: Txn) -> bool:
        return await txn.finish_schema_job(
            job_id, status=status, answer_status=code, answer=answer, revision=revision
        )

    if await rt.db.run_interaction("schema_job_finish", finish):
        logger.info("schema change job %s: %s (%d)", job_id, status, code)


async def _beat(rt: Runtime, tracking: JobTracking, every_s: float) -> None:
    """Renew the job's heartbeat and progress; ask the change set to stop when the job was failed
    meanwhile (a keeper started, or a reader found its heartbeat older than the lease)."""
    while True:
        await asyncio.sleep(every_s)

        async def beat(txn: Txn) -> bool:
            return await txn.beat_schema_job(tracking.id, tracking.progress)

        try:
            running = await rt.db.run_interaction("schema_job_beat", beat)
        except Exception:
            logger.warning("schema change job %s: its heartbeat failed", tracking.id, exc_info=True)
            continue
        if not running and not tracking.committing:
            logger.info("schema change job %s was failed meanwhile: stopping it", tracking.id)
            tracking.stop = stopped("", "it was failed meanwhile", "abandoned")
            return


async def fail_abandoned(rt: Runtime) -> list[str]:
    """A keeper starting, before it clears the staged rows: fail the running jobs that can no
    longer answer (the module docstring)."""
    limits = rt.settings.model.keeper.schema_changes
    answer = stopped("", "its keeper stopped or went silent (a keeper that started found it so)", "abandoned")

    async def fail(txn: Txn) -> list[str]:
        return await txn.fail_abandoned_schema_jobs(
            owner=owner_of(rt), lease_s=limits.job_lease_s, answer=answer.document()
        )

    return await rt.db.run_interaction("fail_abandoned_schema_jobs", fail)


async def _fresh(rt: Runtime, domain: Domain, row: SchemaJobRow) -> SchemaJobRow:
    """The job, failed first when it is running and its heartbeat is older than the lease."""
    lease_s = rt.settings.model.keeper.schema_changes.job_lease_s
    if row.status != "running" or utc_now() - row.heartbeat_at < timedelta(seconds=lease_s):
        return row
    problem = stopped(row.branch, f"its keeper did not renew it for {lease_s:g} s", "abandoned")

    async def fail(txn: Txn) -> SchemaJobRow:
        await txn.finish_schema_job(
            row.id, status="failed", answer_status=409, answer=problem.document(), lease_s=lease_s
        )
        found = await txn.get_schema_job(domain.id, row.id)
        assert found is not None
        return found

    return await rt.db.run_interaction("schema_job_abandoned", fail)


def reads_every_value(access: Access, branch: str) -> bool:
    """Whether the caller reads every Kind and every value on the branch, as the change set did: a
    job's answer and problem name Records and values of any Kind, sensitive ones included."""
    return not access.narrowed(branch) and all(access.can(clearance(tag), branch) for tag in CLEARANCES)


def describe(domain: Domain, row: SchemaJobRow, *, full: bool) -> dict[str, Any]:
    """A job as answered; `full` false (a caller who does not read every value of its branch): no
    value the migration computed reaches it, nor its progress, only the problem's code."""
    answer = row.answer or {}
    problem: dict[str, Any] | None = None
    if row.status == "failed":
        problem = answer if full else {k: answer[k] for k in _HIDDEN if k in answer}
    return {
        "id": row.id,
        "status": row.status,
        "domain": domain.name,
        "branch": row.branch,
        "dry_run": row.dry_run,
        "created_at": iso(row.created_at),
        "created_by": row.created_by,
        "finished_at": None if row.finished_at is None else iso(row.finished_at),
        "revision": row.revision,
        "progress": row.progress if full and row.status == "running" else None,
        "result": answer if full and row.status in ("committed", "dry_run") else None,
        "problem": problem,
        "href": href(domain, row.id),
    }


async def get_job(rt: Runtime, access: Access, domain: Domain, row: SchemaJobRow) -> dict[str, Any]:
    """GET .../schema/changes/{id}: the policy point found the job on a branch the caller reads."""
    row = await _fresh(rt, domain, row)
    return describe(domain, row, full=reads_every_value(access, row.branch))


async def list_jobs(
    rt: Runtime, access: Access, domain: Domain, *, branch: str, limit: int, cursor: str
) -> dict[str, Any]:
    """GET .../schema/changes: the jobs of branches the caller may read, newest first."""
    limit = limit or DEFAULT_LIMIT
    before = (
        decode_cursor(cursor, lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0)
        if cursor
        else None
    )

    async def read(txn: Txn) -> tuple[list[SchemaJobRow], bool]:
        branches = [b for b in await txn.job_branches(domain.id) if access.can(Permission.DATA_READ, b)]
        if branch:
            branches = [b for b in branches if b == branch]
        if not branches:
            return [], False
        rows = await txn.list_schema_jobs(domain.id, branches=branches, before=before, limit=limit + 1)
        return rows[:limit], len(rows) > limit

    rows, more = await rt.db.read("list_schema_jobs", read)
    jobs = [
        describe(domain, row, full=reads_every_value(access, row.branch))
        for row in [await _fresh(rt, domain, r) for r in rows]
    ]
    return {
        "domain": domain.name,
        "jobs": jobs,
        "next_cursor": encode_cursor(rows[-1].seq) if more else None,
    }


__all__ = [
    "Preferences",
    "accept",
    "describe",
    "fail_abandoned",
    "get_job",
    "list_jobs",
    "preferences",
    "stopped",
]
