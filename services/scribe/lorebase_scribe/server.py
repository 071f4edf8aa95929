"""`lorebase scribe`: background jobs. The job loop runs the statistics recount, the suggestions
from resolve misses (which forget old misses), the reconciliation candidates, the retention of
finished schema change jobs and webhook delivery (with the re-sealing of signing keys and the
retention of finished deliveries). With several Scribe replicas, each of the first four runs on one
replica at a time (its lease, Database.lease); deliveries are claimed one by one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc
import httpx

from lorebase import event_loop, metrics_scraped
from lorebase.config import Settings
from lorebase.grpc_problems import problem_rpc
from lorebase.grpc_serve import serve, service_name
from lorebase.logs import configure_service_logging
from lorebase.metrics import SCRIBE_JOB_DURATION, SCRIBE_JOB_LAST_SUCCESS, SCRIBE_JOB_RUNS, WEBHOOK_DELIVERIES
from lorebase.operators import Operators
from lorebase.tracing import configure_service_tracing
from lorebase.v1 import scribe_pb2 as pb
from lorebase.v1 import scribe_pb2_grpc
from lorebase_scribe.reconciliation import reconcile
from lorebase_scribe.schema_jobs import purge_schema_jobs
from lorebase_scribe.statistics import recount
from lorebase_scribe.suggestions import suggest
from lorebase_scribe.webhook_delivery import PassResult
from lorebase_scribe.webhooks import delivery_pass
from lorebase_store import Database, Txn


@dataclass
class Job:
    """A job run every `interval_s`; one whose run answers a time (unix seconds) runs again then
    if that comes first (webhook retries are due at their own time, not on the next pass)."""

    name: str
    interval_s: float
    run: Callable[[], Awaitable[float | None]]
    last_run_at: float = 0.0
    runs: int = 0
    last_error: str = ""
    next_at: float | None = None


async def run_jobs(jobs: list[Job], stop: asyncio.Event) -> None:
    while not stop.is_set():
        now = time.time()
        for job in jobs:
            due = job.last_run_at + job.interval_s
            if job.next_at is not None:
                due = min(due, job.next_at)
            if now >= due:
                started = time.perf_counter()
                try:
                    job.next_at = await job.run()
                    job.last_error = ""
                    SCRIBE_JOB_RUNS.labels(job.name, "ok").inc()
                    SCRIBE_JOB_LAST_SUCCESS.labels(job.name).set(time.time())
                except Exception as exc:  # a failing job is reported, not fatal
                    job.next_at = None
                    job.last_error = f"{type(exc).__name__}: {exc}"
                    SCRIBE_JOB_RUNS.labels(job.name, "failed").inc()
                SCRIBE_JOB_DURATION.labels(job.name).observe(time.perf_counter() - started)
                job.last_run_at = time.time()
                job.runs += 1
        try:
            await asyncio.wait_for(stop.wait(), timeout=1.0)
        except TimeoutError:
            pass


def leased(db: Database, name: str, run: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """`run` only while this Scribe holds the job's lease (Database.lease): with several Scribe
    replicas one runs each pass of the job, and when it dies another takes the next pass."""

    async def run_leased() -> None:
        async with db.lease(f"lorebase.scribe.{name}") as held:
            if held:
                await run()

    return run_leased


def count_deliveries(result: PassResult) -> None:
    """A delivery pass's attempts in lorebase_webhook_deliveries by webhook and outcome."""
    for (webhook, outcome), count in result.by_webhook.items():
        WEBHOOK_DELIVERIES.labels(webhook, outcome).inc(count)


async def _backlog(txn: Txn) -> None:
    pending = await txn.pending_by_webhook(limit=metrics_scraped.TOP)
    metrics_scraped.set_webhook_backlog(pending, await txn.pending_deliveries())


def backlog_metrics(db: Database) -> Callable[[], Awaitable[None]]:
    """The refresh of Scribe's /metrics: the webhook backlog per target (lorebase.metrics_scraped)."""

    async def refresh() -> None:
        await db.read("scribe_metrics", _backlog)

    return refresh


class ScribeServicer(scribe_pb2_grpc.ScribeServicer):
    """ListJobs, for the operator (lorebase.operators: the admin key)."""

    def __init__(self, jobs: list[Job], operators: Operators) -> None:
        self.jobs = jobs
        self.operators = operators

    @problem_rpc("scribe")
    async def ListJobs(self, request: pb.ListJobsRequest, context: grpc.aio.ServicerContext) -> pb.JobList:
        self.operators.require(dict(context.invocation_metadata() or ()))
        return pb.JobList(
            jobs=[
                pb.Job(
                    name=j.name,
                    interval_s=j.interval_s,
                    last_run_at=j.last_run_at,
                    runs=j.runs,
                    last_error=j.last_error,
                )
                for j in self.jobs
            ]
        )


async def run(settings: Settings) -> int:
    url = settings.model.database.url
    if not url:
        raise SystemExit("scribe needs database.url (LOREBASE_DATABASE_URL)")
    db = Database.connect(url, pool_size=4)
    await db.check_schema()
    metrics_scraped.watch_database(db)

    async def database_check() -> None:
        await db.read("scribe_ping", lambda txn: txn.publication_state())

    async def statistics_recount() -> None:
        await recount(db)

    async def suggestions() -> None:
        await suggest(db, settings)

    async def reconciliation() -> None:
        await reconcile(db, settings)

    async def schema_job_retention() -> None:
        await purge_schema_jobs(db, settings.model.keeper.schema_changes.job_retention_s)

    # trust_env=False: no proxy from the environment between Lorebase and the webhook targets.
    client = httpx.AsyncClient(trust_env=False, follow_redirects=False)

    async def webhook_delivery() -> float | None:
        """A delivery pass; then when the earliest pending delivery is due."""
        count_deliveries(await delivery_pass(db, client, settings.model.webhooks))
        due = await db.read_one("webhook_next_attempt", lambda txn: txn.next_attempt_at())
        return None if due is None else due.timestamp()

    every = settings.model.scribe
    jobs = [
        Job("database_check", 30.0, database_check),
        Job(
            "statistics_recount",
            every.statistics.interval_s,
            leased(db, "statistics_recount", statistics_recount),
        ),
        Job("suggestions", every.suggestions.interval_s, leased(db, "suggestions", suggestions)),
        Job("reconciliation", every.reconciliation.interval_s, leased(db, "reconciliation", reconciliation)),
        Job(
            "schema_job_retention",
            every.schema_jobs.interval_s,
            leased(db, "schema_job_retention", schema_job_retention),
        ),
        # Not leased: several Scribes deliver at once, each claiming its own deliveries (docs/feed.md).
        Job("webhook_delivery", every.webhooks.interval_s, webhook_delivery),
    ]
    stop = asyncio.Event()
    task = asyncio.create_task(run_jobs(jobs, stop))

    async def on_stop() -> None:
        stop.set()
        await task
        await client.aclose()
        await db.close()

    services = settings.model.services
    return await serve(
        "scribe",
        services.scribe.listen,
        lambda server: scribe_pb2_grpc.add_ScribeServicer_to_server(
            ScribeServicer(jobs, Operators(settings.model.admin.key)), server
        ),
        services=(service_name(pb, "Scribe"),),
        on_stop=on_stop,
        grace_s=services.shutdown_grace_s,
        metrics_listen=services.scribe.metrics_listen,
        loop_lag_ms=services.loop_lag_ms,
        metrics_refresh=backlog_metrics(db),
    )


def main(settings: Settings) -> int:
    configure_service_logging("scribe", settings)
    configure_service_tracing("scribe", settings)
    try:
        return event_loop.run(run(settings))
    except KeyboardInterrupt:
        return 0


__all__ = [
    "Job",
    "ScribeServicer",
    "backlog_metrics",
    "count_deliveries",
    "leased",
    "main",
    "run",
    "run_jobs",
]
