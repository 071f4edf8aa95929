"""Schema change jobs (migration 0023): a change set answered 202 and run in the background.

A job is `running` until its change set answers; then `committed`, `dry_run` or `failed`, with the
answer's status and document (the change set's answer, or its problem). Every move out of
`running` is conditional on the job still running (`finish_schema_job`), so the first to decide
wins and the others change nothing: the change set's commit transaction (which then rolls back when
it lost), the keeper running it once it answers, a keeper that starts, or a reader that finds its
heartbeat older than the lease. Times of the heartbeat and the lease are PostgreSQL's clock, the
same for every keeper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert

from lorebase_store.tables import schema_change_jobs as jobs
from lorebase_store.txn import TxnBase

RUNNING = "running"
FAILED = "failed"


@dataclass(frozen=True)
class SchemaJobRow:
    id: str
    seq: int
    domain_id: int
    branch: str
    status: str
    dry_run: bool
    created_by: str
    created_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime
    owner: str
    idempotency_key: str | None
    request_digest: str
    progress: dict[str, Any] | None
    answer_status: int | None
    answer: dict[str, Any] | None
    revision: str | None


@dataclass(frozen=True)
class NewSchemaJob:
    id: str
    domain_id: int
    branch: str
    dry_run: bool
    created_by: str
    created_at: datetime
    owner: str
    idempotency_key: str | None
    request_digest: str


def _row(row: Any) -> SchemaJobRow:
    return SchemaJobRow(**{c.name: getattr(row, c.name) for c in jobs.columns})


def _free(job_id: str | None = None) -> Any:
    """The running jobs whose rows no transaction holds (a commit marking one holds it to its end)."""
    query = select(jobs.c.id).where(jobs.c.status == RUNNING)
    if job_id is not None:
        query = query.where(jobs.c.id == job_id)
    return query.with_for_update(skip_locked=True)


def _lease_over(lease_s: float) -> Any:
    return jobs.c.heartbeat_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, lease_s)


class SchemaJobsTxn(TxnBase):
    async def insert_schema_job(self, job: NewSchemaJob) -> SchemaJobRow | None:
        """Create a running job; None when the caller's idempotency key names another already."""
        statement = (
            insert(jobs)
            .values(
                id=job.id,
                domain_id=job.domain_id,
                branch=job.branch,
                status=RUNNING,
                dry_run=job.dry_run,
                created_by=job.created_by,
                created_at=job.created_at,
                heartbeat_at=func.now(),
                owner=job.owner,
                idempotency_key=job.idempotency_key,
                request_digest=job.request_digest,
            )
            .on_conflict_do_nothing(
                index_elements=["domain_id", "created_by", "idempotency_key"],
                index_where=jobs.c.idempotency_key.isnot(None),
            )
            .returning(jobs)
        )
        row = (await self.conn.execute(statement)).first()
        return None if row is None else _row(row)

    async def get_schema_job(self, domain_id: int, job_id: str) -> SchemaJobRow | None:
        statement = select(jobs).where(jobs.c.domain_id == domain_id, jobs.c.id == job_id)
        row = (await self.conn.execute(statement)).first()
        return None if row is None else _row(row)

    async def schema_job_by_key(self, domain_id: int, principal: str, key: str) -> SchemaJobRow | None:
        statement = select(jobs).where(
            jobs.c.domain_id == domain_id, jobs.c.created_by == principal, jobs.c.idempotency_key == key
        )
        row = (await self.conn.execute(statement)).first()
        return None if row is None else _row(row)

    async def list_schema_jobs(
        self, domain_id: int, *, branches: list[str] | None, before: int | None, limit: int
    ) -> list[SchemaJobRow]:
        """Jobs newest first (by sequence), of `branches` when given, older than `before`."""
        cond = [jobs.c.domain_id == domain_id]
        if branches is not None:
            cond.append(jobs.c.branch.in_(branches))
        if before is not None:
            cond.append(jobs.c.seq < before)
        rows = await self.conn.execute(select(jobs).where(*cond).order_by(jobs.c.seq.desc()).limit(limit))
        return [_row(row) for row in rows]

    async def job_branches(self, domain_id: int) -> list[str]:
        """The branches the Domain's jobs ran on (the archive names of deleted ones too)."""
        rows = await self.conn.execute(select(jobs.c.branch).where(jobs.c.domain_id == domain_id).distinct())
        return [row[0] for row in rows]

    async def beat_schema_job(self, job_id: str, progress: dict[str, Any] | None) -> bool:
        """Renew a running job's heartbeat (and its progress); False when it runs no more. A job
        whose commit holds its row (it marks it committed in the commit's transaction, which may
        write a million rows after that) is running still: the beat skips it rather than wait."""
        free = await self.conn.execute(
            select(jobs.c.status).where(jobs.c.id == job_id).with_for_update(skip_locked=True)
        )
        row = free.first()
        if row is None:  # its commit holds it (or it is gone: the next beat says so)
            return (await self.conn.execute(select(jobs.c.id).where(jobs.c.id == job_id))).first() is not None
        if row[0] != RUNNING:
            return False
        await self.conn.execute(
            update(jobs).where(jobs.c.id == job_id).values(heartbeat_at=func.now(), progress=progress)
        )
        return True

    async def finish_schema_job(
        self,
        job_id: str,
        *,
        status: str,
        answer_status: int,
        answer: dict[str, Any],
        revision: str | None = None,
        lease_s: float | None = None,
    ) -> bool:
        """Move a running job to `status` with its answer; False when it was not running (or, with
        `lease_s`, when its heartbeat is younger than that)."""
        cond = [jobs.c.id == job_id, jobs.c.status == RUNNING]
        if lease_s is not None:  # a reader failing an abandoned job: never one its commit holds
            cond.append(_lease_over(lease_s))
            cond.append(jobs.c.id.in_(_free(job_id)))
        values: dict[str, Any] = {
            "status": status,
            "answer_status": answer_status,
            "answer": answer,
            "revision": revision,
            "finished_at": func.now(),
        }
        if status == FAILED:
            values["idempotency_key"] = None  # as a refused synchronous call keeps no receipt
        statement = update(jobs).where(*cond).values(**values).returning(jobs.c.id)
        return (await self.conn.execute(statement)).first() is not None

    async def fail_abandoned_schema_jobs(
        self, *, owner: str, lease_s: float, answer: dict[str, Any]
    ) -> list[str]:
        """A keeper starting: fail the running jobs that can no longer answer (docs/schema.md,
        "Large migrations"): every one `owner` ran before it stopped, and every one whose heartbeat
        is older than the lease. Another keeper's jobs go on (their staged rows stay while their
        keeper lives: lorebase_store.staged_rows)."""
        statement = (
            update(jobs)
            .where(
                jobs.c.status == RUNNING,
                or_(jobs.c.owner == owner, _lease_over(lease_s)),
                jobs.c.id.in_(_free()),  # a job whose commit is writing answers for itself
            )
            .values(
                status=FAILED,
                answer_status=int(answer["status"]),
                answer=answer,
                finished_at=func.now(),
                idempotency_key=None,
            )
            .returning(jobs.c.id)
        )
        return [row[0] for row in await self.conn.execute(statement)]

    async def purge_schema_jobs(self, retention_s: float, *, limit: int) -> int:
        """Delete up to `limit` finished jobs (committed, dry_run, failed) that finished more than
        `retention_s` ago by PostgreSQL's clock; how many. A running job is never deleted."""
        old = (
            select(jobs.c.id)
            .where(
                jobs.c.status != RUNNING,
                jobs.c.finished_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, retention_s),
            )
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        statement = delete(jobs).where(jobs.c.id.in_(old)).returning(jobs.c.id)
        return len((await self.conn.execute(statement)).all())


__all__ = ["NewSchemaJob", "SchemaJobRow", "SchemaJobsTxn"]
