"""Requests that never end, against the real gateway server (uvicorn with the timed httptools
protocol): headers that never complete, a byte a second (Slowloris), a body short of its
Content-Length, a connection that sends nothing, headers without end. Each is cut off at its
deadline; a slow but steady body is not."""

from __future__ import annotations

import asyncio

import orjson
from prometheus_client import REGISTRY

from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.gateway_server import serving

FAST = {
    "LOREBASE_HTTP__HEADER_TIMEOUT_S": "0.5",
    "LOREBASE_HTTP__BODY_TIMEOUT_S": "0.5",
    "LOREBASE_HTTP__MAX_HEADER_BYTES": "8192",
}
GUARD_S = 20  # far beyond every deadline here: a connection still open then was never cut off


def cut_offs(reason: str) -> float:
    return REGISTRY.get_sample_value("lorebase_http_cut_off_total", {"reason": reason}) or 0


async def answer_to(port: int, sent: bytes) -> bytes:
    """Send `sent`, then read until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(sent)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), GUARD_S)
    finally:
        writer.close()


def problem_of(answer: bytes) -> dict[str, object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower(), answer
    assert b"connection: close" in head.lower(), answer
    document: dict[str, object] = orjson.loads(body)
    return document


async def test_headers_that_never_end_are_cut_off_with_408(stack: Stack) -> None:
    before = cut_offs("header_timeout")
    async with serving(stack.gateway, **FAST) as served:
        answer = await answer_to(served.port, b"GET /health HTTP/1.1\r\nHost: lorebase.test\r\n")
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    problem = problem_of(answer)
    assert problem["code"] == "request-timeout" and "http.header_timeout_s" in str(problem["detail"])
    assert cut_offs("header_timeout") == before + 1


async def test_a_header_byte_a_second_does_not_move_the_deadline(stack: Stack) -> None:
    """Slowloris: the header deadline is a deadline, not an idle timeout."""
    async with serving(stack.gateway, **FAST) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        answer = asyncio.create_task(reader.read())
        writer.write(b"GET /health HTTP/1.1\r\nHost: lorebase.test\r\nX-Slow: ")
        sent = 0
        try:
            while not answer.done() and sent < 200:  # 200 bytes take 20 s: 40 deadlines
                writer.write(b"a")
                await writer.drain()
                sent += 1
                await asyncio.sleep(0.1)  # each byte well within any idle timeout of 0.5 s
        except ConnectionError:
            pass  # the server closed while we wrote
        received = await asyncio.wait_for(answer, GUARD_S)
        writer.close()
    assert sent < 200, "still open after 40 header deadlines"
    assert received.startswith(b"HTTP/1.1 408 "), received


async def test_a_connection_that_sends_nothing_is_closed(stack: Stack) -> None:
    async with serving(stack.gateway, **FAST) as served:
        assert await answer_to(served.port, b"") == b""


async def test_a_body_short_of_its_content_length_is_answered_408(stack: Stack) -> None:
    before = cut_offs("body_timeout")
    async with serving(stack.gateway, **FAST) as served:
        answer = await answer_to(
            served.port,
            b"POST /api/v1/domains HTTP/1.1\r\nHost: lorebase.test\r\n"
            b"Authorization: Bearer " + ADMIN_KEY.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + b'{"name": "',
        )
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    problem = problem_of(answer)
    assert problem["code"] == "request-timeout" and "http.body_timeout_s" in str(problem["detail"])
    assert answer.count(b"HTTP/1.1 ") == 1, "the route's own answer goes nowhere"
    assert cut_offs("body_timeout") == before + 1
    assert (await stack.http.get("/api/v1/domains", headers=stack.admin)).json()["domains"] == []


async def test_an_unfinished_body_the_route_never_reads_still_closes_the_connection(stack: Stack) -> None:
    """GET /health answers without reading the body; the rest of it never comes. The connection
    is not kept alive for it."""
    async with serving(stack.gateway, **FAST) as served:
        answer = await answer_to(
            served.port,
            b"GET /health HTTP/1.1\r\nHost: lorebase.test\r\nContent-Length: 1000\r\n\r\n0123456789",
        )
    assert answer.startswith(b"HTTP/1.1 200 "), answer


async def test_a_slow_but_steady_body_goes_through(stack: Stack) -> None:
    """Sent over several body timeouts, faster than http.body_min_bytes_per_s: not cut off."""
    body = b'{"id": "usr_slow", "type": "user", "name": "' + b"x" * 40_000 + b'"}'
    async with serving(stack.gateway, **FAST) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        writer.write(
            b"POST /api/v1/principals HTTP/1.1\r\nHost: lorebase.test\r\nConnection: close\r\n"
            b"Authorization: Bearer " + ADMIN_KEY.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        for start in range(0, len(body), 4096):  # 4 KiB every 0.2 s: 20 KiB/s, over 2 s
            writer.write(body[start : start + 4096])
            await writer.drain()
            await asyncio.sleep(0.2)
        answer = await asyncio.wait_for(reader.read(), GUARD_S)
        writer.close()
    assert answer.startswith((b"HTTP/1.1 201 ", b"HTTP/1.1 422 ")), answer[:200]


async def test_headers_without_end_are_refused_431(stack: Stack) -> None:
    async with serving(stack.gateway, **FAST) as served:
        answer = await answer_to(
            served.port, b"GET /health HTTP/1.1\r\nHost: lorebase.test\r\nX-Big: " + b"a" * 20_000
        )
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert problem_of(answer)["code"] == "headers-too-large"


async def test_a_kept_alive_connection_serves_its_next_request(stack: Stack) -> None:
    request = b"GET /health HTTP/1.1\r\nHost: lorebase.test\r\n\r\n"
    async with serving(stack.gateway, **FAST) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        for _ in range(2):
            writer.write(request)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), GUARD_S)
            assert head.startswith(b"HTTP/1.1 200 "), head
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
        writer.close()
