"""serve(): /metrics on the service's own listener with RPC counters, request ids from the metadata,
and a graceful stop that lets an RPC in flight finish."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import grpc
import httpx
import pytest
import pytest_asyncio
from lorebase_scribe.server import Job, ScribeServicer

from lorebase.clients import ClientSettings, ScribeClient
from lorebase.embedded import free_port
from lorebase.grpc_serve import serve
from lorebase.logs import REQUEST_ID
from lorebase.operators import Operators
from lorebase.v1 import scribe_pb2 as pb
from lorebase.v1 import scribe_pb2_grpc

OPERATOR_KEY = "lbk_operator"
OPERATOR = f"Bearer {OPERATOR_KEY}"


async def _noop() -> None:
    """A job that never runs in these tests (every 60 s)."""


class SlowScribe(ScribeServicer):
    """ListJobs takes `delay_s` and logs on the way (as any servicer logs)."""

    def __init__(self, delay_s: float) -> None:
        super().__init__([Job("noop", 60.0, _noop)], Operators(OPERATOR_KEY))
        self.delay_s = delay_s
        self.started = asyncio.Event()

    async def ListJobs(self, request: pb.ListJobsRequest, context: grpc.aio.ServicerContext) -> pb.JobList:
        self.started.set()
        logging.getLogger("lorebase.scribe.test").info("listing jobs")
        await asyncio.sleep(self.delay_s)
        return await super().ListJobs(request, context)


class Running:
    def __init__(self, servicer: SlowScribe) -> None:
        self.servicer = servicer
        self.port, self.metrics_port = free_port(), free_port()
        self.stop = asyncio.Event()
        self.client = ScribeClient(ClientSettings(address=f"127.0.0.1:{self.port}", deadline_s=10))
        self.task: asyncio.Task[int] | None = None

    async def start(self, *, grace_s: float) -> None:
        self.task = asyncio.create_task(
            serve(
                "scribe",
                f"127.0.0.1:{self.port}",
                lambda server: scribe_pb2_grpc.add_ScribeServicer_to_server(self.servicer, server),
                services=("lorebase.v1.Scribe",),
                grace_s=grace_s,
                metrics_listen=f"127.0.0.1:{self.metrics_port}",
                stop=self.stop,
            )
        )
        for _ in range(100):
            if await self.client.healthy(timeout_s=0.5):
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the server did not start")


@pytest_asyncio.fixture
async def running() -> AsyncIterator[Running]:
    service = Running(SlowScribe(delay_s=0.0))
    await service.start(grace_s=2.0)
    yield service
    service.stop.set()
    assert service.task is not None
    assert await service.task == 0
    await service.client.close()


async def test_the_metrics_listener_counts_rpcs_by_method_and_code(running: Running) -> None:
    await running.client.list_jobs(credential=OPERATOR)
    await running.client.list_jobs(credential=OPERATOR)
    async with httpx.AsyncClient(trust_env=False) as http:
        answer = await http.get(f"http://127.0.0.1:{running.metrics_port}/metrics")
        missing = await http.get(f"http://127.0.0.1:{running.metrics_port}/other")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    lines = answer.text.splitlines()
    counted = [
        line
        for line in lines
        if line.startswith("lorebase_grpc_server_handled_total{")
        and 'grpc_method="ListJobs"' in line
        and 'grpc_code="OK"' in line
    ]
    assert counted and float(counted[0].split()[-1]) >= 2
    assert any(
        line.startswith("lorebase_grpc_server_handling_seconds_bucket{") and "ListJobs" in line
        for line in lines
    )
    assert missing.status_code == 404


async def test_a_call_carries_its_request_id_into_the_services_logs(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lorebase.scribe.test")
    token = REQUEST_ID.set("req-from-gateway-1")
    try:
        await running.client.list_jobs(credential=OPERATOR)
    finally:
        REQUEST_ID.reset(token)
    records = [r for r in caplog.records if r.name == "lorebase.scribe.test"]
    assert [getattr(r, "request_id", None) for r in records] == ["req-from-gateway-1"]


async def test_a_graceful_stop_lets_the_rpc_in_flight_finish() -> None:
    service = Running(SlowScribe(delay_s=0.6))
    await service.start(grace_s=5.0)
    call = asyncio.create_task(service.client.list_jobs(credential=OPERATOR))
    await service.servicer.started.wait()
    service.stop.set()  # what SIGTERM does
    jobs = await call
    assert [job.name for job in jobs.jobs] == ["noop"]
    assert service.task is not None
    assert await service.task == 0
    assert not await service.client.healthy(timeout_s=0.5), "stopped: nothing answers"
    await service.client.close()


async def test_past_the_grace_period_the_rpc_is_cancelled() -> None:
    service = Running(SlowScribe(delay_s=30.0))
    await service.start(grace_s=0.2)
    call = asyncio.create_task(service.client.list_jobs(credential=OPERATOR))
    await service.servicer.started.wait()
    service.stop.set()
    with pytest.raises(Exception) as refused:
        await asyncio.wait_for(call, 5)
    assert getattr(refused.value, "status", None) in (502, 503)
    assert service.task is not None
    assert await service.task == 0
    await service.client.close()
