"""The outbox relay publishes committed events to a real JetStream exactly once per sequence."""

from __future__ import annotations

import dataclasses
import uuid

import orjson
from lorebase_feed.relay import Relay, Retention, connect_nats, ensure_stream, subject_for
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.feed_stack import running_feed


async def test_relay_publishes_each_event_once_even_after_a_crash(supply: Stack, nats_url: str) -> None:
    nc = await connect_nats(nats_url)
    try:
        js = nc.jetstream()
        stream = "T" + uuid.uuid4().hex[:10].upper()
        prefix = "t" + uuid.uuid4().hex[:10]
        await ensure_stream(js, stream, prefix)
        relay = Relay(supply.rt.db, js, prefix=prefix)
        published = await relay.publish_pending()
        assert published == await supply.count("outbox") == 2
        assert await relay.publish_pending() == 0
        # A crash between publishing and marking: the rows look unpublished again.
        async with supply.rt.db.engine.begin() as conn:
            await conn.execute(text("update outbox set published_at = null"))
        assert await relay.publish_pending() == 2
        info = await js.stream_info(stream)
        assert info.state.messages == 2, "JetStream dropped the duplicates by Nats-Msg-Id"
        subscription = await js.subscribe(
            f"{prefix}.>", stream=stream, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        first = await subscription.next_msg(timeout=5)
        second = await subscription.next_msg(timeout=5)
        assert first.subject == subject_for(prefix, "supply", "main") == f"{prefix}.supply.main"
        events = [orjson.loads(first.data), orjson.loads(second.data)]
        assert [e["sequence"] for e in events] == [1, 2]
        assert events[1]["type"] == "revision.committed"
        assert events[1]["author"] == "usr_editor"
        assert events[1]["message"] == "Raise the risk of S-1001"
        assert events[1]["keys"] == {"Supplier": ["S-1001"]}
        assert first.headers["Nats-Msg-Id"] == "evt_1"
        await subscription.unsubscribe()
        await js.delete_stream(stream)
    finally:
        await nc.close()


def test_subjects_keep_branch_names_apart() -> None:
    assert subject_for("p", "supply", "agent/agt_risk/q4") == "p.supply.agent.agt_risk.q4"
    assert subject_for("p", "supply", "release.1") == "p.supply.release%2E1"
    assert subject_for("p", "supply", "x//y") == "p.supply.x.%.y"


async def _outbox_row(stack: Stack, branch: str, event: dict[str, object]) -> None:
    """An outbox row as a commit before the name grammar (or a bug) could have left it."""
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text(
                "insert into outbox (domain_id, branch, type, revision, event, created_at) "
                "select id, :branch, 'revision.committed', null, cast(:event as jsonb), now() "
                "from domains where name = 'supply'"
            ),
            {"branch": branch, "event": orjson.dumps(event).decode()},
        )


async def test_one_event_never_stops_the_relay(supply: Stack, nats_url: str) -> None:
    """Branch names no longer allowed (an empty component, a newline) still publish, to subjects of
    their own; an event NATS refuses (over its payload limit) is parked with its error, counted in
    Feed.Status, and every later event of every Domain is published."""
    async with running_feed(supply, nats_url, relay=False) as feed:
        await _outbox_row(supply, "x//y", {"domain": "supply", "branch": "x//y"})
        await _outbox_row(supply, "nl\n", {"domain": "supply", "branch": "nl\n"})
        await _outbox_row(supply, "main", {"domain": "supply", "branch": "main", "pad": "x" * 2_000_000})
        response = await supply.http.post(
            "/api/v1/domains/supply/operations/update_supplier/execute",
            json={"parameters": {"key": "S-1001", "risk_score": 70}},
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        total = await supply.count("outbox")
        while await feed.relay.publish_pending():
            pass
        status = await feed.client.status()
        assert (status.pending, status.parked, status.published_through) == (0, 1, total)
        assert feed.relay.parked == 1
        async with supply.rt.db.engine.connect() as conn:
            error = await conn.scalar(text("select publish_error from outbox where parked_at is not null"))
        assert error is not None and "MaxPayload" in error
        info = await feed.nc.jetstream().stream_info(feed.stream)
        assert info.state.messages == total - 1
        subjects = set()
        subscription = await feed.nc.jetstream().subscribe(
            f"{feed.prefix}.>", stream=feed.stream, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        for _ in range(total - 1):
            subjects.add((await subscription.next_msg(timeout=5)).subject)
        await subscription.unsubscribe()
        assert {f"{feed.prefix}.supply.x.%.y", f"{feed.prefix}.supply.nl%0A"} <= subjects


async def test_health_is_degraded_while_the_relay_is_behind(supply: Stack, nats_url: str) -> None:
    settings = {"LOREBASE_NATS__RELAY__DEGRADED_AFTER_S": "0"}
    async with running_feed(supply, nats_url, relay=False, settings=settings) as feed:
        await feed.relay.fence.advance(supply.rt.db)  # as the relay's fence task does, NATS up or down
        behind = (await supply.http.get("/health")).json()
        assert behind["status"] == "degraded"
        assert "relay has not published" in behind["degraded"]["feed"]
        while await feed.relay.publish_pending():
            pass
        caught_up = (await supply.http.get("/health")).json()
        assert caught_up["status"] == "ok", caught_up


async def test_stream_limits_are_applied_and_an_operators_settings_kept(nats_url: str) -> None:
    """nats.max_age_s / max_bytes / max_msgs are applied on every start; what an operator changed on
    the stream (here a description, a per-subject limit and a max age) survives a feed restart."""
    nc = await connect_nats(nats_url)
    try:
        js = nc.jetstream()
        stream = "T" + uuid.uuid4().hex[:10].upper()
        prefix = "t" + uuid.uuid4().hex[:10]
        await ensure_stream(js, stream, prefix)
        created = (await js.stream_info(stream)).config
        assert not created.max_age and created.max_msgs in (None, -1)  # unlimited unless a limit is set
        operator = dataclasses.replace(
            created, description="kept by ops", max_msgs_per_subject=1000, max_age=3600
        )
        await js.update_stream(operator)
        await ensure_stream(js, stream, prefix)  # a feed restart with the limits left at 0
        kept = (await js.stream_info(stream)).config
        assert (kept.description, kept.max_msgs_per_subject, kept.max_age) == ("kept by ops", 1000, 3600)
        await ensure_stream(js, stream, prefix, retention=Retention(max_msgs=2, max_bytes=10_000_000))
        limited = (await js.stream_info(stream)).config
        assert (limited.max_msgs, limited.max_bytes, limited.description) == (2, 10_000_000, "kept by ops")
        for n in range(5):
            await js.publish(f"{prefix}.supply.main", b'{"sequence": %d}' % n, stream=stream)
        state = (await js.stream_info(stream)).state
        assert (state.messages, state.first_seq) == (2, 4)  # the oldest were dropped
    finally:
        await nc.close()
