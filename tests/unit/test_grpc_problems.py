"""One answer for the failures of every servicer (lorebase.grpc_problems), over a real gRPC server:
a Problem travels as its status with the problem document; anything else is logged once, with its
traceback, and answered as a 500 problem that names nothing of it; a stream answers the same way
after the items it sent."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from lorebase_scribe.server import Job, ScribeServicer

from lorebase.clients import ClientSettings, ScribeClient
from lorebase.embedded import free_port
from lorebase.grpc_problems import problem_from_error, problem_rpc, problems_as_status
from lorebase.grpc_serve import new_server
from lorebase.operators import Operators
from lorebase.problems import Problem
from lorebase.v1 import scribe_pb2_grpc

SECRET = "password=hunter2 in a driver's message"


class Calls:
    """Unary methods as a servicer writes them, and a stream that fails after its first item."""

    @problem_rpc("scribe")
    async def Refuse(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise Problem(409, "stale-head", "the branch moved; read again", head="abc123")

    @problem_rpc("scribe")
    async def Break(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise RuntimeError(SECRET)

    @problem_rpc("scribe")
    async def Echo(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def Stream(self, request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async with problems_as_status(context, "feed", "Stream"):
            yield b"first"
            if request == b"problem":
                raise Problem(404, "not-found", "unknown branch 'gone'")
            raise RuntimeError(SECRET)


@pytest_asyncio.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    calls = Calls()
    server = new_server()
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(getattr(calls, name))
        for name in ("Refuse", "Break", "Echo")
    }
    handlers["Stream"] = grpc.unary_stream_rpc_method_handler(calls.Stream)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Calls", handlers),))
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel
    await server.stop(None)


async def _problem(channel: grpc.aio.Channel, method: str) -> Problem:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await channel.unary_unary(f"/test.Calls/{method}")(b"x")
    return problem_from_error(raised.value, "test")


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_problem_travels_as_its_status_with_its_document(
    channel: grpc.aio.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await channel.unary_unary("/test.Calls/Refuse")(b"x")
    assert raised.value.code() == grpc.StatusCode.ABORTED
    problem = problem_from_error(raised.value, "test")
    assert (problem.status, problem.code, problem.extra["head"]) == (409, "stale-head", "abc123")
    assert _errors(caplog) == [], "a Problem is an answer, not a failure to log"


async def test_an_unexpected_error_is_logged_once_and_answered_as_a_500_without_details(
    channel: grpc.aio.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    problem = await _problem(channel, "Break")
    assert (problem.status, problem.code) == (500, "internal")
    assert SECRET not in problem.to_json().decode()
    [record] = _errors(caplog)
    assert record.name == "lorebase.scribe" and "Break" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


async def test_an_answer_passes_untouched(channel: grpc.aio.Channel) -> None:
    assert await channel.unary_unary("/test.Calls/Echo")(b"as sent") == b"as sent"


@pytest.mark.parametrize(("request_", "status"), [(b"problem", 404), (b"break", 500)])
async def test_a_stream_answers_its_failure_after_the_items_it_sent(
    channel: grpc.aio.Channel, caplog: pytest.LogCaptureFixture, request_: bytes, status: int
) -> None:
    received = []
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for item in channel.unary_stream("/test.Calls/Stream")(request_):
            received.append(item)
    assert received == [b"first"]
    assert problem_from_error(raised.value, "test").status == status
    assert len(_errors(caplog)) == (1 if status == 500 else 0)


class BrokenScribe(ScribeServicer):
    """A job list that cannot be answered (a name that is not a string)."""

    def __init__(self) -> None:
        super().__init__([Job(name=42, interval_s=1.0, run=None)], Operators("lbk_operator"))  # type: ignore[arg-type]


async def test_scribe_answers_an_unexpected_failure_as_a_500_problem(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = new_server()
    scribe_pb2_grpc.add_ScribeServicer_to_server(BrokenScribe(), server)
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    client = ScribeClient(ClientSettings(address=f"127.0.0.1:{port}", deadline_s=10))
    try:
        with pytest.raises(Problem) as raised:
            await client.list_jobs(credential="Bearer lbk_operator")
    finally:
        await client.close()
        await server.stop(None)
    assert (raised.value.status, raised.value.code) == (500, "internal")
    assert [r.name for r in _errors(caplog)] == ["lorebase.scribe"]
