"""The event stream: Feed.Events over gRPC (live from NATS, missed ones from PostgreSQL) and
GET /branches/{b}/events (SSE) through the gateway."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest_asyncio
from lorebase_feed.relay import Relay
from sqlalchemy import text

from lorebase.clients.feed import EventStream
from lorebase.v1 import feed_pb2 as pb
from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_feed_changes import raise_risk

ADMIN = f"Bearer {ADMIN_KEY}"


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url) as running:
        yield running


async def opened(feed: Feed, credential: str = ADMIN, **kwargs: Any) -> EventStream:
    stream = feed.client.events(credential=credential, domain="supply", branch="main", **kwargs)
    await stream.first()
    return stream


async def next_event(stream: EventStream) -> pb.StreamItem:
    """The next revision event, skipping heartbeats."""
    async with asyncio.timeout(20):
        async for item in stream:
            if not item.heartbeat:
                return item
    raise AssertionError("the stream ended")


async def branch_log(stack: Stack) -> list[int]:
    async with stack.rt.db.engine.connect() as conn:
        rows = await conn.execute(
            text(
                "select sequence from outbox where branch = 'main' and type = 'revision.committed' order by sequence"
            )
        )
        return [row[0] for row in rows]


async def test_live_events_and_resume(supply: Stack, feed: Feed) -> None:
    stream = await opened(feed)
    try:
        revision = await raise_risk(supply, 61)
        item = await next_event(stream)
        document = orjson.loads(item.data)
        assert item.event == "revision" and document["sequence"] == item.sequence
        assert document["revision"] == revision and document["keys"] == {"Supplier": ["S-1001"]}
        assert document["keys_truncated"] is False and document["branch"] == "main"
    finally:
        stream.cancel()
    # Resume from 0: the whole branch log, from PostgreSQL, then live.
    resumed = await opened(feed, last_event_id="0")
    try:
        got = [(await next_event(resumed)).sequence for _ in range(3)]
        assert got == await branch_log(supply)
        await raise_risk(supply, 62)
        assert (await next_event(resumed)).sequence == (await branch_log(supply))[-1]
    finally:
        resumed.cancel()


async def test_kinds_filter_and_heartbeat(supply: Stack, feed: Feed) -> None:
    stream = await opened(feed, kinds="Part", last_event_id="0")
    try:
        first = await next_event(stream)
        assert orjson.loads(first.data)["message"] == "Import the supply example data"
        await raise_risk(supply, 63)  # changes no Part: filtered out, then silence brings a heartbeat
        async with asyncio.timeout(20):
            item = await stream.__anext__()
        assert item.heartbeat
    finally:
        stream.cancel()


async def test_resume_across_random_disconnects_has_no_gap_or_duplicate(supply: Stack, feed: Feed) -> None:
    rng = random.Random(7)
    writes = 12

    async def writer() -> None:
        for score in range(writes):
            await raise_risk(supply, 20 + score)
            await asyncio.sleep(rng.random() * 0.05)

    task = asyncio.create_task(writer())
    total = 2 + writes  # the import, the update of the example, then ours
    received: list[int] = []
    last = "0"
    try:
        while len(received) < total:
            stream = await opened(feed, last_event_id=last)
            try:
                for _ in range(rng.randint(1, 4)):
                    if len(received) == total:
                        break
                    item = await next_event(stream)
                    received.append(item.sequence)
                    last = str(item.sequence)
            finally:
                stream.cancel()  # a disconnect
    finally:
        await task
    assert received == await branch_log(supply)
    assert len(received) == 2 + writes


async def test_events_from_postgres_when_nats_is_quiet(supply: Stack, feed: Feed) -> None:
    """With the relay stopped (NATS sees nothing), the stream still delivers, up to the fence."""
    stream = await opened(feed)
    try:
        await feed.hub.stop()  # no live events at all
        revision = await raise_risk(supply, 64)
        await feed.relay.fence.advance(supply.rt.db)
        assert orjson.loads((await next_event(stream)).data)["revision"] == revision
    finally:
        stream.cancel()


async def test_a_revoked_key_ends_the_stream(supply: Stack, feed: Feed) -> None:
    await supply.principal("usr_follow")
    response = await supply.http.post("/api/v1/principals/usr_follow/keys", headers=supply.admin)
    key = response.json()
    await supply.grant("supply", "usr_follow", "viewer")
    stream = await opened(feed, credential=f"Bearer {key['key']}")
    revoked = await supply.http.delete(
        f"/api/v1/principals/usr_follow/keys/{key['id']}", headers=supply.admin
    )
    assert revoked.status_code == 200, revoked.text
    async with asyncio.timeout(20):
        items = [item async for item in stream]  # ends within reauthorize_interval_s
    assert all(item.heartbeat for item in items)
    again = await supply.http.get(
        "/api/v1/domains/supply/branches/main/events", headers={"Authorization": f"Bearer {key['key']}"}
    )
    assert again.status_code == 401


async def test_sse_through_the_gateway(supply: Stack, feed: Feed) -> None:
    # The test transport buffers the whole answer: a short connection makes it end.
    feed.servicer.stream_limits = dataclasses.replace(feed.servicer.stream_limits, max_connection_s=1)
    response = await supply.http.get(
        "/api/v1/domains/supply/branches/main/events", headers={**supply.admin, "Last-Event-ID": "1"}
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache" and response.headers["x-accel-buffering"] == "no"
    body = response.text
    # The reconnection time opens the stream, alone in its block, as the seed's example does.
    assert body.startswith("retry: 3000\n\nid: ")
    frames = [f.removeprefix("retry: 3000\n") for f in body.split("\n\n")]
    frames = [f for f in frames if f.startswith("id:")]
    sequence = (await branch_log(supply))[1]
    assert frames[0].startswith(f"id: {sequence}\nevent: revision\ndata: {{")
    assert orjson.loads(frames[0].split("data: ", 1)[1])["message"] == "Raise the risk of S-1001"
    query = await supply.http.get(
        "/api/v1/domains/supply/branches/main/events", params={"last_event_id": "0"}, headers=supply.admin
    )
    assert len([f for f in query.text.split("\n\n") if "id: " in f]) == 2
    for params, headers, status in (
        ({"last_event_id": "x"}, supply.admin, 400),
        ({"last_event_id": "\u00b2"}, supply.admin, 400),  # a digit to str.isdigit, not a number
        ({"kinds": "Nope"}, supply.admin, 400),
        ({}, {}, 401),
        ({"last_event_id": "99999999"}, supply.admin, 409),  # ahead of every event: resync, not silence
    ):
        refused = await supply.http.get(
            "/api/v1/domains/supply/branches/main/events", params=params, headers=headers
        )
        assert refused.status_code == status, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        if status == 409:
            assert refused.json()["reason"] == "ahead-of-stream"
            assert refused.json()["type"].endswith("resync-required")
    missing = await supply.http.get("/api/v1/domains/supply/branches/nope/events", headers=supply.admin)
    assert missing.status_code == 404


async def _publish_everything(relay: Relay) -> None:
    async with asyncio.timeout(20):
        while True:
            await relay.publish_pending()
            if not await relay.db.read_one("unpublished", lambda txn: txn.unpublished(limit=1)):
                return
            await asyncio.sleep(0.05)


async def _last_event_id(feed: Feed) -> str:
    js = feed.nc.jetstream()
    state = (await js.stream_info(feed.stream)).state
    headers = (await js.get_msg(feed.stream, state.last_seq)).headers
    assert headers is not None
    return str(headers["Lorebase-Event-Id"])


async def test_a_restored_database_numbers_new_events_after_the_streams_last(
    supply: Stack, nats_url: str
) -> None:
    """A database restored from a backup older than the stream: the relay that takes over moves the
    outbox's sequence past the stream's last event, so a new event never reuses a lost one's
    `evt_<sequence>` (JetStream's duplicate window would drop it, receivers deduplicating by id too),
    marks what the restored outbox holds as published (it is on the stream), and a client whose
    Last-Event-ID was lost is told to resync (docs/operations.md, "Backup and restore")."""
    async with running_feed(supply, nats_url, relay=False) as feed:
        relay = Relay(supply.rt.db, feed.nc.jetstream(), subjects=feed.subjects, stream=feed.stream)
        for score in (61, 62):
            await raise_risk(supply, score)
        await _publish_everything(relay)
        assert await _last_event_id(feed) == "evt_4"
        # The restore, as the outbox sees it: events 3 and 4 are gone, 2 was not published yet, and
        # the sequence is back at 2.
        async with supply.rt.db.engine.begin() as conn:
            await conn.execute(text("DELETE FROM outbox WHERE sequence > 2"))
            await conn.execute(text("UPDATE outbox SET published_at = NULL WHERE sequence = 2"))
            await conn.execute(text("SELECT setval(pg_get_serial_sequence('outbox', 'sequence'), 2)"))
        messages = (await feed.nc.jetstream().stream_info(feed.stream)).state.messages

        taking_over = Relay(supply.rt.db, feed.nc.jetstream(), subjects=feed.subjects, stream=feed.stream)
        await _publish_everything(taking_over)
        assert (await feed.nc.jetstream().stream_info(feed.stream)).state.messages == messages
        for lost in ("3", "4"):
            refused = await supply.http.get(
                "/api/v1/domains/supply/branches/main/events",
                headers={**supply.admin, "Last-Event-ID": lost},
            )
            assert refused.status_code == 409, refused.text
            assert refused.json()["reason"] == "lost-in-restore"
            assert "restored" in refused.json()["detail"]

        await raise_risk(supply, 63)
        await _publish_everything(taking_over)
        assert await _last_event_id(feed) == "evt_5"
        assert (await feed.nc.jetstream().stream_info(feed.stream)).state.messages == messages + 2
        ahead = await supply.http.get(
            "/api/v1/domains/supply/branches/main/events", headers={**supply.admin, "Last-Event-ID": "6"}
        )
        assert ahead.status_code == 409 and ahead.json()["reason"] == "ahead-of-stream"
