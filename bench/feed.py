"""The change feed in `make bench` (bench/run.py calls `measure`), against the running stack.

1. Commit → SSE delivery: LOREBASE_BENCH_SSE_SUBSCRIBERS (1,000) event streams of `main` open
   through the gateway (GET …/branches/main/events, one HTTP/1.1 connection each), then
   LOREBASE_BENCH_SSE_COMMITS (100) Operation executes, one at a time. The latency of one event at
   one subscriber is from the moment the execute's answer (the commit) reached the writer to the
   moment the subscriber read the event's frame. Target: p99 <= 50 ms.
   Baseline in the same run: raw NATS core publish → subscribe latency to as many subscriptions
   (over 20 connections), as many messages, one at a time: what the bus alone costs this client.
2. Webhook deliveries per second: LOREBASE_BENCH_WEBHOOKS (10) webhooks on `main` and
   LOREBASE_BENCH_WEBHOOK_COMMITS (500) commits, so 5,000 deliveries, which the stack's Scribe
   sends (webhook_delivery job, HttpxSender) to a local receiver that answers 204 at once. The rate
   is the deliveries received divided by the time from the first to the last. Target: >= 500/s.

Every client runs in this process (uvloop) on the same machine as the stack.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import struct
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import uvloop
from nats.aio.client import Client as NATS

from bench import cpu

SUBSCRIBERS = int(os.environ.get("LOREBASE_BENCH_SSE_SUBSCRIBERS", "1000"))
SSE_COMMITS = int(os.environ.get("LOREBASE_BENCH_SSE_COMMITS", "100"))
WEBHOOKS = int(os.environ.get("LOREBASE_BENCH_WEBHOOKS", "10"))
WEBHOOK_COMMITS = int(os.environ.get("LOREBASE_BENCH_WEBHOOK_COMMITS", "500"))
EXECUTE = "/api/v1/domains/supply/operations/update_supplier/execute"

# The stack's environment for the webhook benchmark (bench/run.py adds it to `lorebase up`'s).
WEBHOOK_KEY_ENV = "LOREBASE_BENCH_WEBHOOK_KEY"
STACK_ENV = {
    WEBHOOK_KEY_ENV: "bench-webhook-encryption-key-0123456789abcdef",
    "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": f"secret://env/{WEBHOOK_KEY_ENV}",
    "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["http"]',
    "LOREBASE_SCRIBE__WEBHOOKS__INTERVAL_S": "0.5",
    # The SSE subscribers are the admin's (not capped per principal); room for all of them.
    "LOREBASE_AGENTS__FEED__MAX_STREAMS": str(max(2000, SUBSCRIBERS + 100)),
}


@dataclass
class Latency:
    p50_ms: float
    p99_ms: float
    samples: int
    missing: int = 0


def _latency(samples: list[float], missing: int = 0) -> Latency:
    if len(samples) < 2:
        return Latency(float("nan"), float("nan"), len(samples), missing)
    q = statistics.quantiles(samples, n=100)
    return Latency(q[49] * 1000, q[98] * 1000, len(samples), missing)


class SseFollower:
    """One SSE connection read with asyncio streams: frames parsed just enough to find the revision."""

    def __init__(self, host: str, port: int, path: str, key: str, seen: dict[str, list[float]]) -> None:
        self.host, self.port, self.path, self.key, self.seen = host, port, path, key, seen
        self.writer: asyncio.StreamWriter | None = None
        self.task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(
            (
                f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {self.key}\r\n"
                "Accept: text/event-stream\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the event stream answered {head[:40]!r}")
        # The stream opens with a comment (`: keep-alive`, once the follower is registered); the
        # retry field rides on the first event (lorebase_gateway.fanout).
        buffer = b""
        while b"\n\n" not in buffer:
            buffer += await reader.read(65536)
        self.task = asyncio.create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        marker = b'"revision":"'
        pending = b""
        while True:
            data = await reader.read(65536)
            if not data:
                return
            now = time.perf_counter()
            # Frames end with a blank line; the chunked framing between them is left in place.
            *frames, pending = (pending + data).split(b"\n\n")
            for frame in frames:
                found = frame.find(marker)
                if found >= 0:
                    end = frame.index(b'"', found + len(marker))
                    self.seen.setdefault(frame[found + len(marker) : end].decode(), []).append(now)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        if self.writer is not None:
            self.writer.close()


async def _sse(base: str, key: str) -> tuple[Latency, int]:
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    seen: dict[str, list[float]] = {}
    followers = [
        SseFollower(host, port, "/api/v1/domains/supply/branches/main/events", key, seen)
        for _ in range(SUBSCRIBERS)
    ]
    try:
        for start in range(0, len(followers), 50):
            await asyncio.gather(*(f.open() for f in followers[start : start + 50]))
        samples: list[float] = []
        missing = 0
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for i in range(SSE_COMMITS):
                answer = await client.post(
                    EXECUTE,
                    json={"parameters": {"key": "S-1001", "risk_score": i % 101}, "message": f"sse {i}"},
                    headers={"Authorization": f"Bearer {key}"},
                )
                committed = time.perf_counter()
                answer.raise_for_status()
                revision = answer.json()["revision"]
                deadline = committed + 10
                while len(seen.get(revision, ())) < SUBSCRIBERS and time.perf_counter() < deadline:  # noqa: ASYNC110 (counters moved by readers)
                    await asyncio.sleep(0.002)
                arrivals = seen.pop(revision, [])
                missing += SUBSCRIBERS - len(arrivals)
                samples += [t - committed for t in arrivals]
                await asyncio.sleep(0.05)
        return _latency(samples, missing), len(followers)
    finally:
        await asyncio.gather(*(f.close() for f in followers), return_exceptions=True)


async def _raw_nats(nats_url: str) -> Latency:
    connections = 20
    subject = "bench.latency"
    clients: list[NATS] = []
    received: list[float] = []
    counter = 0

    async def on_message(msg: object) -> None:
        nonlocal counter
        sent = struct.unpack("d", msg.data)[0]  # type: ignore[attr-defined]
        received.append(time.perf_counter() - sent)
        counter += 1

    try:
        for _ in range(connections + 1):
            client = NATS()
            await client.connect(servers=[nats_url])
            clients.append(client)
        publisher, subscribers = clients[0], clients[1:]
        for index in range(SUBSCRIBERS):
            await subscribers[index % connections].subscribe(subject, cb=on_message)
        for client in subscribers:
            await client.flush()
        missing = 0
        for _ in range(SSE_COMMITS):
            counter = 0
            await publisher.publish(subject, struct.pack("d", time.perf_counter()))
            await publisher.flush()
            deadline = time.perf_counter() + 10
            while counter < SUBSCRIBERS and time.perf_counter() < deadline:  # noqa: ASYNC110 (counters moved by readers)
                await asyncio.sleep(0.002)
            missing += SUBSCRIBERS - counter
            await asyncio.sleep(0.05)
        return _latency(received, missing)
    finally:
        for client in clients:
            await client.close()


class Receiver:
    """A webhook receiver on loopback: reads each request whole and answers 204 at once."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.deliveries: set[str] = set()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    lowered = name.lower()
                    if lowered == b"content-length":
                        length = int(value)
                    elif lowered == b"lorebase-delivery":
                        delivery = value.strip().decode()
                body = await reader.readexactly(length)
                if b'"message":"webhook bench"' in body:  # not the commits made before the webhooks
                    self.times.append(time.perf_counter())
                    self.deliveries.add(delivery)
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):  # closed at the end
            pass
        finally:
            writer.close()


async def _webhooks(base: str, key: str) -> tuple[float, int, int, int, float]:
    receiver = Receiver()
    server = await asyncio.start_server(receiver._handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    headers = {"Authorization": f"Bearer {key}"}
    expected = 0
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            hooks = []
            for _ in range(WEBHOOKS):
                created = await client.post(
                    "/api/v1/domains/supply/webhooks",
                    json={
                        "url": f"http://127.0.0.1:{port}/hook",
                        "events": ["revision.committed"],
                        "branches": ["main"],
                    },
                    headers=headers,
                )
                created.raise_for_status()
                hooks.append(created.json()["id"])
            await asyncio.sleep(2)  # Scribe's next pass sets its cursor before our commits
            gate = asyncio.Semaphore(8)

            async def commit(i: int) -> bool:
                async with gate:
                    answer = await client.post(
                        EXECUTE,
                        json={
                            "parameters": {"key": f"S-{1001 + i % 30}", "risk_score": i % 101},
                            "message": "webhook bench",
                        },
                        headers=headers,
                    )
                    answer.raise_for_status()
                    return answer.json()["revision"] is not None  # None: the value was already set

            revisions = sum(await asyncio.gather(*(commit(i) for i in range(WEBHOOK_COMMITS))))
            expected = WEBHOOKS * revisions
            deadline = time.perf_counter() + max(120, expected / 50)
            while len(receiver.times) < expected and time.perf_counter() < deadline:  # noqa: ASYNC110 (counters moved by readers)
                await asyncio.sleep(0.1)
            for hook in hooks:
                await client.delete(f"/api/v1/domains/supply/webhooks/{hook}", headers=headers)
    finally:
        server.close()
    times = receiver.times
    elapsed = times[-1] - times[0] if len(times) > 1 else float("nan")
    rate = (len(times) - 1) / elapsed if len(times) > 1 else 0.0
    return rate, len(times), len(receiver.deliveries), expected, elapsed


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


CpuRows = list[tuple[str, cpu.Usage | None, str]]


async def _measure(base: str, key: str, nats_url: str) -> tuple[list[str], CpuRows]:
    raw = await _raw_nats(nats_url)
    load_before = _load()
    before = cpu.begin()
    ours, connected = await _sse(base, key)
    sse_cpu = cpu.end(before, SSE_COMMITS)
    before = cpu.begin()
    rate, delivered, distinct, expected, elapsed = await _webhooks(base, key)
    webhook_cpu = cpu.end(before, delivered)
    rows: CpuRows = [
        (
            f"feed: commit + SSE fan-out to {connected} subscribers (per commit)",
            sse_cpu,
            f"p99 {ours.p99_ms:.1f} ms",
        ),
        ("feed: webhook deliveries by Scribe (per delivery, with the commits)", webhook_cpu, f"{rate:.0f}/s"),
    ]
    met = "met" if ours.p99_ms <= 50 else "missed"
    met_rate = "met" if rate >= 500 else "missed"
    return [
        f"change feed ({load_before} before the SSE run, {_load()} after the webhook run):",
        f"- commit → SSE delivery, {connected} subscribers through the gateway, {SSE_COMMITS} commits: "
        f"p50 {ours.p50_ms:.1f} ms, p99 {ours.p99_ms:.1f} ms over {ours.samples} deliveries"
        f"{f', {ours.missing} missing' if ours.missing else ''} (target p99 <= 50 ms: {met}); "
        f"raw NATS publish → subscribe to {SUBSCRIBERS} subscriptions: p50 {raw.p50_ms:.1f} ms, "
        f"p99 {raw.p99_ms:.1f} ms; ratio p99 {ours.p99_ms / raw.p99_ms:.1f}x, p50 {ours.p50_ms / raw.p50_ms:.1f}x",
        f"- webhook deliveries by Scribe to a local receiver: {delivered} received ({distinct} distinct) of {expected} "
        f"({WEBHOOKS} webhooks x {expected // max(WEBHOOKS, 1)} Revisions) in {elapsed:.2f} s: {rate:.0f}/s "
        f"(target >= 500/s: {met_rate})",
        "",
    ], rows


def measure(base: str, key: str, nats_url: str) -> tuple[list[str], CpuRows]:
    """The feed's lines and its rows of the per-process CPU table."""
    return uvloop.run(_measure(base, key, nats_url))


__all__ = ["STACK_ENV", "measure"]
