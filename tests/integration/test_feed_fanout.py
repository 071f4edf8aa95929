"""The gateway's event streams share one Feed stream per branch (docs/feed.md, "Shared branch
streams"): through a real uvicorn gateway, several SSE clients of a branch get every event once, in
order, each with its own Last-Event-ID, Kinds and credential, while Feed serves one live stream."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import httpx_sse
import orjson
import pytest_asyncio
import uvicorn
from lorebase_gateway.app import create_app
from lorebase_gateway.fanout import QUEUE_LIMIT, Follower

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_feed_changes import raise_risk
from tests.integration.test_feed_events import branch_log

EVENTS = "/api/v1/domains/supply/branches/main/events"


@dataclass
class Client:
    """One SSE connection, read in the background: the `id`s of its revision frames, its heartbeats."""

    response: httpx.Response
    ids: list[int] = field(default_factory=list)
    documents: list[dict[str, object]] = field(default_factory=list)
    heartbeats: int = 0
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self) -> None:
        try:
            buffer = ""
            async for text in self.response.aiter_text():
                buffer += text
                *frames, buffer = buffer.split("\n\n")
                for frame in frames:
                    if frame.startswith((": keep-alive", "retry: 3000")):  # the opening block, then each one
                        self.heartbeats += 1
                    elif frame.startswith("id: "):
                        head, _, data = frame.partition("\ndata: ")
                        self.ids.append(int(head.split("\n")[0][4:]))
                        self.documents.append(orjson.loads(data))
                self.changed.set()
        except httpx.HTTPError:
            pass
        finally:
            self.ended.set()

    async def until(self, done: Callable[[], bool]) -> None:
        async with asyncio.timeout(20):
            while not done():
                self.changed.clear()
                await self.changed.wait()

    async def wait_for(self, count: int) -> list[int]:
        await self.until(lambda: len(self.ids) >= count)
        return self.ids


@dataclass
class Gateway:
    url: str
    http: httpx.AsyncClient
    stack: Stack
    clients: list[tuple[Client, asyncio.Task[None]]] = field(default_factory=list)

    async def follow(self, headers: dict[str, str] | None = None, **params: str) -> Client:
        request = self.http.build_request(
            "GET", self.url + EVENTS, headers=headers or self.stack.admin, params=params
        )
        response = await self.http.send(request, stream=True)
        assert response.status_code == 200, (await response.aread()).decode()
        client = Client(response)
        self.clients.append((client, asyncio.create_task(client.read())))
        return client

    async def refused(self, headers: dict[str, str], **params: str) -> int:
        response = await self.http.get(self.url + EVENTS, headers=headers, params=params)
        assert response.headers["content-type"] == "application/problem+json"
        return response.status_code


@pytest_asyncio.fixture
async def served(supply: Stack, nats_url: str) -> AsyncIterator[tuple[Gateway, Feed]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    async with running_feed(supply, nats_url) as feed:
        supply.gateway.fanout.heartbeat_s = 0.5
        config = uvicorn.Config(create_app(supply.gateway), host="127.0.0.1", port=port, log_config=None)
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 (uvicorn only sets a flag)
            await asyncio.sleep(0.02)
        async with httpx.AsyncClient(trust_env=False, timeout=20) as http:
            gateway = Gateway(f"http://127.0.0.1:{port}", http, supply)
            try:
                yield gateway, feed
            finally:
                for client, task in gateway.clients:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await client.response.aclose()
        server.should_exit = True
        await asyncio.wait_for(serving, 15)


async def test_clients_of_a_branch_share_one_feed_stream(served: tuple[Gateway, Feed], supply: Stack) -> None:
    gateway, feed = served
    live = [await gateway.follow() for _ in range(3)]
    # One stream of `main` in Feed's hub, whatever the number of clients.
    assert feed.hub.subscribers == 1
    await raise_risk(supply, 71)
    await raise_risk(supply, 72)
    newest = (await branch_log(supply))[-2:]
    for client in live:
        assert await client.wait_for(2) == newest
    # A client resuming from the start gets the whole branch log (from PostgreSQL up to where the
    # shared stream stood, then from it), then the next commit once, like the others.
    resumed = await gateway.follow(headers={**supply.admin, "Last-Event-ID": "0"})
    assert await resumed.wait_for(len(await branch_log(supply))) == await branch_log(supply)
    await raise_risk(supply, 73)
    log = await branch_log(supply)
    assert await resumed.wait_for(len(log)) == log
    for client in live:
        assert await client.wait_for(3) == log[-3:]
    await asyncio.sleep(0.3)
    assert resumed.ids == log and all(client.ids == log[-3:] for client in live)  # nothing twice
    assert feed.hub.subscribers == 1


async def test_kinds_are_filtered_per_client(served: tuple[Gateway, Feed], supply: Stack) -> None:
    gateway, _ = served
    suppliers = await gateway.follow(kinds="Supplier")
    parts = await gateway.follow(kinds="Part")
    everything = await gateway.follow()
    await raise_risk(supply, 74)  # changes a Supplier, no Part
    sequence = (await branch_log(supply))[-1]
    assert await suppliers.wait_for(1) == [sequence] and await everything.wait_for(1) == [sequence]
    # The stream opens with its retry block; silence for the Part client then means a keep-alive, no event.
    await parts.until(lambda: parts.heartbeats > 1)
    assert parts.ids == []
    assert suppliers.documents[0]["kinds"] == {"Supplier": 1}


async def test_refusals_answer_before_the_stream(served: tuple[Gateway, Feed], supply: Stack) -> None:
    gateway, _ = served
    await gateway.follow()  # a shared stream exists: every refusal comes from the client's own check
    assert await gateway.refused({}) == 401
    assert await gateway.refused({"Authorization": "Bearer nope"}) == 401
    assert await gateway.refused(supply.admin, kinds="Nope") == 400
    assert await gateway.refused(supply.admin, last_event_id="x") == 400


async def test_the_shared_stream_outlives_the_credential_that_opened_it(
    served: tuple[Gateway, Feed], supply: Stack
) -> None:
    gateway, feed = served
    await supply.principal("usr_first")
    key = (await supply.http.post("/api/v1/principals/usr_first/keys", headers=supply.admin)).json()
    await supply.grant("supply", "usr_first", "viewer")
    first = await gateway.follow(headers={"Authorization": f"Bearer {key['key']}"})  # opens the shared stream
    other = await gateway.follow()
    await raise_risk(supply, 75)
    revoked = await supply.http.delete(f"/api/v1/principals/usr_first/keys/{key['id']}", headers=supply.admin)
    assert revoked.status_code == 200, revoked.text
    async with asyncio.timeout(20):
        await first.ended.wait()  # within reauthorize_interval_s
    # The other client goes on, with no gap, on a shared stream opened again with its credential.
    for score in (76, 77):
        await raise_risk(supply, score)
    log = await branch_log(supply)
    assert await other.wait_for(3) == log[-3:]
    assert not other.ended.is_set() and feed.hub.subscribers == 1
    assert await gateway.refused({"Authorization": f"Bearer {key['key']}"}) == 401


async def test_a_follower_that_falls_behind_is_ended() -> None:
    follower = Follower("Bearer k", frozenset(), joined_at=0)
    for sequence in range(1, QUEUE_LIMIT + 1):
        follower.offer(sequence, b"frame")
    assert not follower.ended.is_set() and len(follower.frames) == QUEUE_LIMIT
    follower.offer(QUEUE_LIMIT + 1, b"frame")  # a client that stopped reading: end it, free its queue
    assert follower.ended.is_set() and not follower.frames
    follower.offer(QUEUE_LIMIT + 2, b"frame")
    assert not follower.frames


async def test_httpx_sse_sees_only_real_events(served: tuple[Gateway, Feed], supply: Stack) -> None:
    """The stream opens as the seed's example does, with `retry: 3000` alone in its block; httpx-sse
    yields that block as an event without data (the SSE spec dispatches none for it), and every
    event after it is a revision whose data is its JSON document."""
    gateway, _ = served
    async with httpx_sse.aconnect_sse(
        gateway.http, "GET", gateway.url + EVENTS, headers=supply.admin
    ) as source:
        events = source.aiter_sse()
        first = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.3)  # the stream is open and has sent its opening keep-alive
        await raise_risk(supply, 75)
        async with asyncio.timeout(20):
            opening = await first
            event = await anext(events)
    assert opening.data == "" and opening.retry == 3000
    assert event.event == "revision"
    assert orjson.loads(event.data)["sequence"] == int(event.id) == (await branch_log(supply))[-1]
