"""A change set's migration staged apart (`staged_apart`): in a process of its own, outside the
branch's lock, its staging's liveness mark held and its rows forgotten unless a commit wrote them;
and a change set run as a job (`JobTracking`), which may stop it at its next batch."""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from lorebase.problems import Problem
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes.migrate import SAMPLE, log_progress
from lorebase_keeper.schema_changes.process import Apart, stage_apart
from lorebase_keeper.schema_changes.staged import Staged, staging_alive, staging_id
from lorebase_store import Txn

logger = logging.getLogger("lorebase.keeper.schema_changes")


@dataclass
class JobTracking:
    """A change set run as a job (jobs.py). Its commit marks the job committed in the commit's own
    transaction; its progress is kept for the job's heartbeat; and it stops at its next batch,
    never in its commit, once `stop` is set or its deadline (`time.monotonic()`) has passed."""

    id: str
    deadline: float
    stop: Problem | None = None
    progress: dict[str, Any] | None = None
    committing: bool = False  # its commit transaction marked the job (and may be committing it)

    def check(self, branch: str) -> None:
        if self.stop is not None:
            raise self.stop
        if time.monotonic() > self.deadline:
            raise Problem(
                409,
                "schema-migration-moved",
                f"the change set's job on branch {branch!r} passed its deadline "
                "(keeper.schema_changes.job_deadline_s) while it migrated; nothing changed, send it "
                "again (and raise the deadline for a migration this large)",
                branch=branch,
                reason="deadline",
            )


@contextlib.asynccontextmanager
async def staged_apart(
    rt: Runtime,
    domain: Domain,
    branch: str,
    schema: dict[str, Any],
    items: list[dict[str, Any]],
    on_invalid: str,
    *,
    expected_head: str | None = None,
    dry_run: bool = False,
    job: JobTracking | None = None,
) -> AsyncIterator[Staged]:
    """`items` applied to `schema` (the branch's) and their migration staged over the branch's head
    in a process of its own (process.py), outside the branch's lock; its staging's liveness mark
    held, and its staged rows forgotten when the block ends without a commit that wrote them (gone
    with it otherwise). Each batch is logged (a line per tenth of each Kind's Records) and told to
    `rt.schema_progress` (and to `job`, which may stop it). A change set on a branch (below) and a
    kept merge's catch-up (catch_up.py, `staged_ahead`) stage so."""
    limits = domain.settings.model.keeper.schema_changes
    logged: dict[str, int] = {}

    async def told(kind: str, done: int, total: int) -> None:
        if logged.get(kind) != (tenth := done * 10 // total):
            logged[kind] = tenth
            await log_progress(kind, done, total)
        if job is not None:
            job.progress = {"kind": kind, "done": done, "total": total}
            job.check(branch)
        for listener in rt.schema_progress:
            await listener(kind, done, total)

    staging = None if dry_run else staging_id()
    database = rt.settings.model.database
    apart = Apart(
        database.url,
        database.statement_timeout_s,
        domain.id,
        branch,
        schema,
        items,
        on_invalid,
        expected_head,
        staging,
        staging or f"schema-dry-run-{uuid.uuid4().hex}",
        limits.batch_records,
        domain.settings.model.agents.feed.changed_keys_max,
        SAMPLE + limits.catch_up_max,
        limits.duty,
        limits.nice,
    )
    # Its staging's liveness mark, held until its rows are gone: a keeper that starts meanwhile
    # clears only the rows of stagings whose keeper is gone (staged/staging.py, lorebase_store.staged_rows).
    async with staging_alive(rt.db, staging):
        try:
            started = time.perf_counter()
            staged = await stage_apart(apart, rt.db, told)
            logger.info(
                "schema change on %s: %d changes staged in %.1f s, outside the branch's lock",
                branch,
                staged.count,
                time.perf_counter() - started,
            )
            yield staged
        finally:
            # Gone with the commit's transaction when it committed; here after a dry run's end, a
            # refusal or an error (a chunk of a failed staging included).
            if staging is not None:
                await rt.db.run_interaction("schema_change_forget_staged", _forget_staged_rows, staging)


async def _forget_staged_rows(txn: Txn, staging: str) -> None:
    await txn.forget_staged_rows(staging)
