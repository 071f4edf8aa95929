"""Webhook receivers that misbehave, on real sockets: one that accepts and never answers, one that
resets the connection, one that answers 500. Each attempt fails, the schedule of
webhooks.backoff_* is followed (no attempt before it is due), every attempt carries the same
Idempotency-Key and a fresh, valid signature, and after max_attempts the delivery is dead. One
that drops packets (its connection never completes) fails only that attempt, after
webhooks.connect_timeout_s. One that answers 429 or 503 with Retry-After (seconds, an HTTP date)
is retried no sooner than it asks."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from datetime import timedelta
from email.utils import formatdate
from typing import Any

import httpx
import pytest
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhooks import HttpxSender
from sqlalchemy import text

from lorebase.ids import utc_now
from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed
from tests.integration.test_feed_changes import raise_risk
from tests.integration.test_webhooks import (  # noqa: F401 (the fixture)
    HOOKS,
    Receiver,
    feed,
    pending_rows,
    sealer,
    start_cursor,
)
from tests.unit.test_webhook_targets import verified


class BadReceiver:
    """A real HTTP server on loopback that reads each request whole, then `hang`s (never answers),
    `reset`s the connection (RST) or answers `500`."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.requests: list[tuple[dict[str, str], bytes, float]] = []
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def received(self, count: int) -> int:
        """How many requests it has read, once `count` have arrived or 10 s have passed: a sender that
        gave up on a hanging receiver may return before this loop has read its request."""
        for _ in range(200):
            if len(self.requests) >= count:
                break
            await asyncio.sleep(0.05)
        return len(self.requests)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")[1:]
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append((headers, body, time.time()))
        if self.behaviour == "hang":
            await asyncio.Event().wait()  # until the server closes
        elif self.behaviour == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif self.behaviour == "429":  # come back in 600 s
            writer.write(b"HTTP/1.1 429 Slow down\r\nRetry-After: 600\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
        elif self.behaviour == "503":  # come back at a date 700 s from now
            when = formatdate(time.time() + 700, usegmt=True).encode()
            writer.write(b"HTTP/1.1 503 Busy\r\nRetry-After: " + when + b"\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
        else:
            writer.write(b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops")
            await writer.drain()
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/hook"

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()
        await self.server.wait_closed()


@pytest.mark.parametrize("behaviour", ["hang", "reset", "500"])
async def test_misbehaving_receivers_follow_the_schedule_then_dead(
    supply: Stack,
    feed: Feed,  # noqa: F811
    behaviour: str,
) -> None:
    receiver = BadReceiver(behaviour)
    settings = DeliverySettings(max_attempts=3, backoff_initial_s=60, backoff_max_s=90)
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True, timeout_s=0.5)
        hook = (await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)).json()
        await start_cursor(supply.rt.db)
        await raise_risk(supply, 74)

        async def run_pass(after_s: float) -> Any:
            return await deliver_pending(
                supply.rt.db, sender, sealer(), settings, now=start + timedelta(seconds=after_s)
            )

        start = utc_now() + timedelta(seconds=1)  # after the fan-out queues the delivery
        first = await run_pass(0)
        for _ in range(100):  # the outbox fence may wait for another transaction of the cluster
            if first.queued:
                break
            await asyncio.sleep(0.05)
            first = await run_pass(0)
        assert (first.queued, first.failed) == (1, 1)
        # The schedule: attempt 2 is due within 60 s of attempt 1 (full jitter), attempt 3 within
        # 90 s (backoff_max_s) of 2.
        assert (await run_pass(61)).failed == 1 and await receiver.received(2) == 2
        last = await run_pass(61 + 91)
        assert last.dead == 1 and await receiver.received(3) == 3
        assert (await run_pass(86400)).failed + (await run_pass(86400)).dead == 0  # dead: never again
    assert len(receiver.requests) == 3
    assert len({h["idempotency-key"] for h, _, _ in receiver.requests}) == 1
    assert len({h["lorebase-delivery"] for h, _, _ in receiver.requests}) == 1
    for headers, body, received_at in receiver.requests:
        # Signed when sent: valid, and its timestamp is that attempt's.
        assert verified(hook["secret"], headers["lorebase-signature"], body)
        stamp = int(headers["lorebase-signature"].split(",")[0].removeprefix("t="))
        assert abs(stamp - received_at) < 300
    async with supply.rt.db.engine.connect() as conn:
        status, attempts, error, last_status = (
            await conn.execute(
                text("select status, attempts, last_error, last_status from webhook_deliveries")
            )
        ).one()
    assert (status, attempts) == ("dead", 3)
    expected = {"hang": "no answer within", "reset": "ReadError", "500": "500"}[behaviour]
    assert expected in error, error
    assert last_status == (500 if behaviour == "500" else None)


async def test_concurrent_passes_send_each_delivery_once(
    supply: Stack,
    feed: Feed,  # noqa: F811
) -> None:
    """Two Scribe replicas running passes at once: each claims its own deliveries (FOR UPDATE SKIP
    LOCKED with a lease), so no delivery is sent twice."""
    receiver = Receiver([])
    settings = DeliverySettings(concurrency=2)  # pages of 100: both passes get work
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        for _ in range(3):
            created = await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
            assert created.status_code == 201
        await start_cursor(supply.rt.db)
        for score in range(8):
            await raise_risk(supply, 10 + score)
        results = await asyncio.gather(
            *(deliver_pending(supply.rt.db, sender, sealer(), settings) for _ in range(2))
        )
        results.append(await deliver_pending(supply.rt.db, sender, sealer(), settings))
    assert sum(r.delivered for r in results) == 24
    sent = [(h["lorebase-delivery"]) for h, _ in receiver.requests]
    assert len(sent) == len(set(sent)) == 24


async def test_a_fan_out_page_larger_than_the_bind_parameter_limit(
    supply: Stack,
    feed: Feed,  # noqa: F811
) -> None:
    """500 events x 10 webhooks is 5,000 deliveries in one fan-out page: more bind parameters than
    one PostgreSQL statement takes (32,767) if sent as one VALUES list."""
    created = await supply.http.post(HOOKS, json={"url": "http://127.0.0.1:9/hook"}, headers=supply.admin)
    hook = created.json()["id"]
    rows = pending_rows(hook, 5000, due=utc_now())
    await supply.rt.db.run_interaction("add", lambda txn: txn.add_deliveries(rows))
    await supply.rt.db.run_interaction("again", lambda txn: txn.add_deliveries(rows))  # adds nothing
    assert await supply.count("webhook_deliveries") == 5000


class KeepAliveReceiver:
    """Answers 200 with a short body on connections it keeps open; counts the connections."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests = 0
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                await reader.readexactly(length)
                self.requests += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nthanks!\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/hook"

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()
        await self.server.wait_closed()


async def test_deliveries_reuse_the_connection(
    supply: Stack,
    feed: Feed,  # noqa: F811
) -> None:
    """The answer's short body is drained (never kept), so the next delivery to the same receiver
    goes over the same connection."""
    receiver = KeepAliveReceiver()
    settings = DeliverySettings(concurrency=1)
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        for score in range(4):
            await raise_risk(supply, 80 + score)
        assert (await deliver_pending(supply.rt.db, sender, sealer(), settings)).delivered == 4
    assert (receiver.requests, receiver.connections) == (4, 1)


class DroppingReceiver(Receiver):
    """A receiver whose SYNs are dropped: a listening socket with a backlog of 0 whose accept
    queue is held full by one connection that is never accepted. Linux then drops further SYNs, so
    a connection to it never completes (no refusal, no answer). `recover()` lets the same port
    answer like Receiver from then on."""

    def __init__(self) -> None:
        super().__init__([])
        self.listener = socket.socket()
        self.filler = socket.socket()

    async def __aenter__(self) -> str:
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(0)
        self.filler.connect(self.listener.getsockname())  # queued, never accepted: the queue is full
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await super()._handle(reader, writer)
        except asyncio.IncompleteReadError:  # the filler, closed before it sent anything
            writer.close()

    async def recover(self) -> None:
        self.filler.close()
        # Serving listens again on the same socket with a real backlog.
        self.server = await asyncio.start_server(self._handle, sock=self.listener)

    async def __aexit__(self, *exc: Any) -> None:
        self.filler.close()
        if self.server is None:
            self.listener.close()
        else:
            await super().__aexit__(*exc)


async def test_a_receiver_that_drops_packets_fails_only_that_attempt(
    supply: Stack,
    feed: Feed,  # noqa: F811
) -> None:
    """The attempt to a receiver that drops packets fails with a connect timeout
    (webhooks.connect_timeout_s, far below timeout_s), while the same pass delivers the same event
    to another webhook. Once the receiver answers, the next attempt is the same delivery with the
    same Idempotency-Key."""
    dropping, working = DroppingReceiver(), Receiver([])
    settings = DeliverySettings(backoff_initial_s=60)
    async with dropping as dropping_url, working as working_url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(
            client, allowed_schemes=("http",), allow_private_targets=True, timeout_s=60, connect_timeout_s=0.5
        )
        dropped = (await supply.http.post(HOOKS, json={"url": dropping_url}, headers=supply.admin)).json()
        await supply.http.post(HOOKS, json={"url": working_url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        await raise_risk(supply, 76)
        first = await deliver_pending(supply.rt.db, sender, sealer(), settings)
        assert (first.queued, first.delivered, first.failed) == (2, 1, 1)
        [failed] = await supply.rt.db.read("deliveries", lambda txn: txn.deliveries_of(dropped["id"]))
        assert (failed.status, failed.attempts, failed.last_status) == ("pending", 1, None)
        assert failed.last_error is not None and "ConnectTimeout" in failed.last_error, failed.last_error
        await dropping.recover()
        later = await deliver_pending(
            supply.rt.db, sender, sealer(), settings, now=utc_now() + timedelta(minutes=5)
        )
        assert later.delivered == 1
        [done] = await supply.rt.db.read("deliveries", lambda txn: txn.deliveries_of(dropped["id"]))
    assert (done.id, done.status, done.attempts) == (failed.id, "delivered", 2)
    [(headers, body)] = dropping.requests
    [(other_headers, _)] = working.requests
    assert headers["idempotency-key"] == other_headers["idempotency-key"] == f"evt_{failed.sequence}"
    assert headers["lorebase-delivery"] == failed.id
    assert verified(dropped["secret"], headers["lorebase-signature"], body)


@pytest.mark.parametrize(("behaviour", "asked_s"), [("429", 600), ("503", 700)])
async def test_retry_after_is_honoured(
    supply: Stack,
    feed: Feed,  # noqa: F811
    behaviour: str,
    asked_s: int,
) -> None:
    receiver = BadReceiver(behaviour)
    # A backoff of at most 1 s: only Retry-After can hold the next attempt back.
    settings = DeliverySettings(max_attempts=5, backoff_initial_s=1, backoff_max_s=1)
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True, timeout_s=5)
        await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        await raise_risk(supply, 73)
        start = utc_now() + timedelta(seconds=1)

        async def run_pass(after_s: float) -> Any:
            return await deliver_pending(
                supply.rt.db, sender, sealer(), settings, now=start + timedelta(seconds=after_s)
            )

        first = await run_pass(0)
        for _ in range(100):
            if first.queued:
                break
            await asyncio.sleep(0.05)
            first = await run_pass(0)
        assert first.failed == 1 and len(receiver.requests) == 1
        assert (await run_pass(asked_s - 30)).failed == 0 and len(receiver.requests) == 1
        assert (await run_pass(asked_s + 30)).failed == 1 and len(receiver.requests) == 2
