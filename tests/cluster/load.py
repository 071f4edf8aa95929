"""The steady load the cluster's faults are injected under, and what each part of it saw.

- **Writes**: `update_supplier` through HAProxy in a loop; every 2xx with a Revision is an
  acknowledged write, with when it was acknowledged. A refused write (an error, a 5xx, a
  connection refused) opens a refusal that the next acknowledged write closes: `refused_s` sums them.
- **SSE clients**: followers of `main`'s event stream through HAProxy (so each reconnection may
  reach another gateway) that reconnect with `Last-Event-ID` when their stream ends or breaks.
- **A NATS durable consumer** (pull, explicit acks) on the Domain's commits, connected to every
  NATS server.
- **Webhook deliveries** to a receiver on 127.0.0.1 that records each delivery's `webhook-id`.

Each observer records event ids (`evt_<sequence>`) and Revisions; `Tally` counts, against the
acknowledged writes of a window, what each lost and what it received twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

OPERATION = "/api/v1/domains/supply/operations/update_supplier/execute"
EVENTS = "/api/v1/domains/supply/branches/main/events"
CHANGES = "/api/v1/domains/supply/branches/main/changes"
SUBJECT = "lorebase.domains.supply.revision.committed.>"


@dataclass
class Seen:
    """What one observer received: (event id, Revision) in arrival order."""

    name: str
    items: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, event_id: str, revision: str) -> None:
        with self.lock:
            self.items.append((event_id, revision))

    def revisions(self) -> list[str]:
        with self.lock:
            return [revision for _, revision in self.items]

    def repeats(self, among: set[str]) -> int:
        """How many times an event of these Revisions was received again."""
        counts = Counter(event_id for event_id, revision in list(self.items) if revision in among)
        return sum(count - 1 for count in counts.values())


class Writes:
    """The write loop (see the module docstring)."""

    def __init__(self, base_url: str, headers: dict[str, str], key: str = "S-1001") -> None:
        self.base_url, self.headers, self.key = base_url, headers, key
        self.acknowledged: list[tuple[float, str]] = []
        self.refusals: list[tuple[float, float]] = []  # (first refused, next acknowledged)
        self.refused = 0
        self._refused_since: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="writes", daemon=True)

    def start(self) -> Writes:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        with httpx.Client(
            base_url=self.base_url, headers=self.headers, timeout=10, trust_env=False
        ) as client:
            score = 0
            while not self._stop.is_set():
                score = score % 100 + 1
                try:
                    response = client.post(
                        OPERATION, json={"parameters": {"key": self.key, "risk_score": score}}
                    )
                    revision = response.json().get("revision") if response.is_success else None
                except (httpx.HTTPError, ValueError):
                    revision = None
                now = time.monotonic()
                if revision:
                    self.acknowledged.append((now, revision))
                    if self._refused_since is not None:
                        self.refusals.append((self._refused_since, now))
                        self._refused_since = None
                else:
                    self.refused += 1
                    if self._refused_since is None:
                        self._refused_since = now
                    self._stop.wait(0.05)

    def since(self, start: float) -> set[str]:
        return {revision for at, revision in self.acknowledged if at >= start}

    def refused_s(self, start: float) -> float:
        """Seconds writes were refused since `start` (a refusal still open counts up to now)."""
        total = sum(end - begin for begin, end in self.refusals if end >= start)
        if self._refused_since is not None:
            total += time.monotonic() - self._refused_since
        return total

    def wait_for_more(self, count: int, timeout_s: float = 120.0) -> None:
        target = len(self.acknowledged) + count
        deadline = time.monotonic() + timeout_s
        while len(self.acknowledged) < target:
            assert time.monotonic() < deadline, f"writes stalled ({self.refused} refused)"
            time.sleep(0.05)


class SseClient:
    """One follower of main's event stream that reconnects with Last-Event-ID."""

    def __init__(self, base_url: str, headers: dict[str, str], name: str) -> None:
        self.base_url, self.headers = base_url, headers
        self.seen = Seen(name)
        self.last_id: str | None = None
        self.reconnections = 0
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> SseClient:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)

    def _run(self) -> None:
        timeout = httpx.Timeout(5.0, read=5.0)
        with httpx.Client(base_url=self.base_url, timeout=timeout, trust_env=False) as client:
            while not self._stop.is_set():
                headers = dict(self.headers)
                if self.last_id is not None:
                    headers["Last-Event-ID"] = self.last_id
                try:
                    with client.stream("GET", EVENTS, headers=headers) as response:
                        if response.status_code != 200:
                            self._stop.wait(0.5)
                            continue
                        self.connected.set()
                        self._read(response)
                except httpx.HTTPError:
                    pass
                self.reconnections += 1
                self._stop.wait(0.2)

    def wait_connected(self, timeout_s: float = 60.0) -> None:
        assert self.connected.wait(timeout_s), f"{self.seen.name} could not open the event stream"

    def _read(self, response: httpx.Response) -> None:
        event_id, data = None, ""
        for line in response.iter_lines():
            if self._stop.is_set():
                return
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
            elif line == "" and event_id is not None:
                revision = json.loads(data).get("revision", "")
                self.seen.add(f"evt_{event_id}", revision)
                self.last_id = event_id
                event_id, data = None, ""


class DurableConsumer:
    """A JetStream durable pull consumer of the Domain's commits, on its own event loop thread."""

    def __init__(self, nats_url: str, name: str = "cluster-faults") -> None:
        self.nats_url, self.name = nats_url, name
        self.seen = Seen("NATS consumer")
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), name="nats", daemon=True)

    def start(self) -> DurableConsumer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(20)

    async def _run(self) -> None:
        import nats
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        servers = [server for server in self.nats_url.split(",") if server]
        client = await nats.connect(servers=servers, max_reconnect_attempts=-1, reconnect_time_wait=0.5)
        try:
            js = client.jetstream(timeout=5)
            subscription = None
            while subscription is None and not self._stop.is_set():
                try:
                    subscription = await js.pull_subscribe(
                        SUBJECT,
                        durable=self.name,
                        stream="LOREBASE",
                        config=ConsumerConfig(
                            ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.NEW, num_replicas=3
                        ),
                    )
                except Exception:
                    self.errors += 1
                    await asyncio.sleep(0.5)
            while not self._stop.is_set():
                assert subscription is not None
                try:
                    messages = await subscription.fetch(batch=64, timeout=1)
                except Exception:  # a timeout, or the cluster electing a leader
                    continue
                for message in messages:
                    event = json.loads(message.data)
                    headers = message.headers or {}
                    self.seen.add(headers.get("Lorebase-Event-Id", ""), event.get("revision", ""))
                    with contextlib.suppress(Exception):
                        await message.ack_sync(timeout=5)
        finally:
            with contextlib.suppress(Exception):
                await client.close()


class WebhookReceiver:
    """An HTTP receiver on 127.0.0.1 that answers 204 and records each delivery's webhook-id."""

    def __init__(self) -> None:
        self.seen = Seen("webhooks")
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                revision = json.loads(body).get("revision", "")
                seen.add(self.headers.get("webhook-id", ""), revision)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, name="webhooks", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def changes_since(client: httpx.Client, base_url: str, headers: dict[str, str], since: str) -> list[str]:
    """The Revisions of main after `since`, through GET /changes, every page."""
    revisions: list[str] = []
    while True:
        response = client.get(f"{base_url}{CHANGES}", params={"since": since}, headers=headers)
        assert response.status_code == 200, response.text
        page = response.json()
        revisions += [event["revision"] for event in page["events"]]
        since = page["next_since"]
        if not page["more"]:
            return revisions


@dataclass
class Tally:
    """What one fault cost: the refused time and, per observer, acknowledged writes lost and events
    received twice."""

    fault: str
    refused_s: float
    refused_requests: int
    acknowledged: int
    lost: dict[str, int]
    repeated: dict[str, int]
    note: str = ""

    def row(self) -> str:
        cells = " | ".join(f"{self.lost[k]} / {self.repeated[k]}" for k in self.lost)
        return f"| {self.fault} | {self.refused_s:.2f} s ({self.refused_requests}) | {self.acknowledged} | {cells} | {self.note} |"

    @staticmethod
    def header(observers: list[str]) -> str:
        names = " | ".join(f"{name}: lost / twice" for name in observers)
        line = " | ".join("---" for _ in observers)
        return f"| fault | writes refused (requests) | acknowledged | {names} | note |\n| --- | --- | --- | {line} | --- |"


def settle(acknowledged: set[str], observers: list[Seen], timeout_s: float = 90.0) -> None:
    """Until every observer has every acknowledged Revision, or the timeout (the check then fails)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(acknowledged <= set(seen.revisions()) for seen in observers):
            return
        time.sleep(0.25)


__all__ = [
    "CHANGES",
    "DurableConsumer",
    "Seen",
    "SseClient",
    "Tally",
    "WebhookReceiver",
    "Writes",
    "changes_since",
    "settle",
]
