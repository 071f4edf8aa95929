"""Scribe's job loop: a job runs every interval, and again at the time its run answers when that
comes first (webhook retries are due at their own time, not on the next pass)."""

from __future__ import annotations

import asyncio
import time

from lorebase_scribe.server import Job, run_jobs


async def test_a_job_runs_again_when_it_asks() -> None:
    stop = asyncio.Event()
    runs: list[float] = []

    async def deliver() -> float | None:
        runs.append(time.time())
        if len(runs) == 2:
            stop.set()
        return time.time()  # due again at once: long before its hour

    job = Job("webhook_delivery", 3600.0, deliver)
    async with asyncio.timeout(30):
        await run_jobs([job], stop)
    assert job.runs == 2 and job.last_error == ""


async def test_a_job_that_answers_nothing_waits_its_interval() -> None:
    stop = asyncio.Event()

    async def once() -> None:
        stop.set()

    job = Job("statistics_recount", 3600.0, once)
    async with asyncio.timeout(30):
        await run_jobs([job], stop)
    assert job.runs == 1 and job.next_at is None
