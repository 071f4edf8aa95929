"""The outbox relay publishes committed events to a real JetStream exactly once per sequence."""

from __future__ import annotations

import dataclasses
import uuid

import orjson
import pytest
from lorebase_feed.relay import Relay, Retention, connect_nats, ensure_stream, subject_for
from lorebase_feed.subjects import Subjects
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import text

from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.feed_stack import running_feed


async def test_relay_publishes_each_event_once_even_after_a_crash(supply: Stack, nats_url: str) -> None:
    nc = await connect_nats(nats_url)
    try:
        js = nc.jetstream()
        stream = "T" + uuid.uuid4().hex[:10].upper()
        subjects = Subjects("t" + uuid.uuid4().hex[:10], "u" + uuid.uuid4().hex[:10])
        await ensure_stream(js, stream, subjects)
        relay = Relay(supply.rt.db, js, subjects=subjects)
        published = await relay.publish_pending()
        assert published == await supply.count("outbox") == 2
        assert await relay.publish_pending() == 0
        # A crash between publishing and marking: the rows look unpublished again.
        async with supply.rt.db.engine.begin() as conn:
            await conn.execute(text("update outbox set published_at = null"))
        assert await relay.publish_pending() == 2
        info = await js.stream_info(stream)
        assert info.state.messages == 4, "two copies each; JetStream dropped the repeats by Nats-Msg-Id"
        subscription = await js.subscribe(
            f"{subjects.prefix}.>", stream=stream, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        first = await subscription.next_msg(timeout=5)
        second = await subscription.next_msg(timeout=5)
        assert first.subject == f"{subjects.prefix}.supply.revision.committed.main"
        events = [orjson.loads(first.data), orjson.loads(second.data)]
        assert [e["sequence"] for e in events] == [1, 2]
        assert events[1]["type"] == "revision.committed"
        assert events[1]["author"] == "usr_editor"
        assert events[1]["message"] == "Raise the risk of S-1001"
        assert events[1]["keys"] == {"Supplier": ["S-1001"]}
        assert first.headers is not None
        assert (first.headers["Nats-Msg-Id"], first.headers["Lorebase-Event-Id"]) == ("evt_1.typed", "evt_1")
        await subscription.unsubscribe()
        # The deprecated copy: the same document, the event's id as its Nats-Msg-Id.
        legacy = await js.subscribe(
            f"{subjects.legacy_prefix}.>",
            stream=stream,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
        )
        old = await legacy.next_msg(timeout=5)
        assert old.subject == subject_for(subjects.legacy_prefix, "supply", "main")
        assert old.data == first.data
        assert old.headers is not None
        assert (old.headers["Nats-Msg-Id"], old.headers["Lorebase-Event-Id"]) == ("evt_1", "evt_1")
        await legacy.unsubscribe()
        await js.delete_stream(stream)
    finally:
        await nc.close()


def test_subjects_keep_branch_names_and_types_apart() -> None:
    assert subject_for("p", "supply", "agent/agt_risk/q4") == "p.supply.agent.agt_risk.q4"
    assert subject_for("p", "supply", "release.1") == "p.supply.release%2E1"
    assert subject_for("p", "supply", "x//y") == "p.supply.x.%.y"
    subjects = Subjects("lorebase.domains", "lorebase.events")
    typed = subjects.typed
    assert typed("supply", "revision.committed", "main") == "lorebase.domains.supply.revision.committed.main"
    assert typed("supply", "operation.risk_flag_raised", "agent/agt_risk/q4") == (
        "lorebase.domains.supply.operation.risk_flag_raised.agent.agt_risk.q4"
    )
    assert typed("supply", "operation.a.b", "x//y") == "lorebase.domains.supply.operation.a%2Eb.x.%.y"
    assert subjects.copies("supply", "revision.committed", "main", 7) == [
        ("lorebase.domains.supply.revision.committed.main", "evt_7.typed"),
        ("lorebase.events.supply.main", "evt_7"),
    ]
    alone = Subjects("lorebase.domains", "lorebase.events", legacy=False)
    assert alone.copies("supply", "revision.committed", "main", 7) == [
        ("lorebase.domains.supply.revision.committed.main", "evt_7.typed")
    ]
    # What a restarted relay reads from the stream's last message: an event is complete on the
    # stream once its last copy is there.
    assert subjects.published_through("evt_7") == alone.published_through("evt_7.typed") == 7
    assert subjects.published_through("evt_7.typed") == 6
    assert subjects.published_through("other") is None
    for first, second in [("lorebase.events", "lorebase.events"), ("lorebase", "lorebase.events")]:
        with pytest.raises(ValueError, match="overlap"):
            Subjects(first, second)
    Subjects("lorebase", "lorebase.events", legacy=False)  # nothing published there, no overlap


async def test_a_type_filter_gets_only_that_type_server_side(supply: Stack, nats_url: str) -> None:
    """nats-py consumers filtered by subject (the server filters): the Operation events of a Domain,
    its revision.committed events, and a legacy subscriber that still gets one copy of each."""
    flagged = await supply.http.post(
        "/api/v1/domains/supply/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1002", "severity": "high", "reason": "Late"}},
        headers=supply.admin,
    )
    assert flagged.status_code == 200, flagged.text
    async with running_feed(supply, nats_url, relay=False) as feed:
        while await feed.relay.publish_pending():
            pass
        js = feed.nc.jetstream()
        total = await supply.count("outbox")  # 2 example commits, the flag's commit and its event
        assert total == 4

        async def received(filter_subject: str) -> list[tuple[str, dict[str, object]]]:
            """Everything a durable pull consumer with this filter gets, as its server delivers it."""
            durable = "c" + uuid.uuid4().hex[:8]
            sub = await js.pull_subscribe(
                filter_subject,
                durable=durable,
                stream=feed.stream,
                config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
            )
            info = await js.consumer_info(feed.stream, durable)
            assert info.config.filter_subject == filter_subject  # the server does the filtering
            got = []
            for message in await sub.fetch(batch=total * 2, timeout=2):
                got.append((message.subject, orjson.loads(message.data)))
                await message.ack()
            pending = (await js.consumer_info(feed.stream, durable)).num_pending
            assert pending == 0
            await sub.unsubscribe()
            return got

        operations = await received(f"{feed.prefix}.supply.operation.*.>")
        assert [(subject, event["type"]) for subject, event in operations] == [
            (f"{feed.prefix}.supply.operation.risk_flag_raised.main", "operation.risk_flag_raised")
        ]
        commits = await received(f"{feed.prefix}.supply.revision.committed.>")
        assert [event["type"] for _, event in commits] == ["revision.committed"] * 3
        assert [event["sequence"] for _, event in commits] == [1, 2, 3]
        every_domain = await received(f"{feed.prefix}.*.revision.committed.main")
        assert [event["sequence"] for _, event in every_domain] == [1, 2, 3]
        legacy = await received(f"{feed.legacy_prefix}.supply.>")
        assert [event["sequence"] for _, event in legacy] == [1, 2, 3, 4]


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
        status = await feed.client.status(credential=f"Bearer {ADMIN_KEY}")
        assert (status.pending, status.parked, status.published_through) == (0, 1, total)
        assert feed.relay.parked == 1
        async with supply.rt.db.engine.connect() as conn:
            error = await conn.scalar(text("select publish_error from outbox where parked_at is not null"))
        assert error is not None and "MaxPayload" in error
        info = await feed.nc.jetstream().stream_info(feed.stream)
        assert info.state.messages == 2 * (total - 1)  # a typed and a legacy copy of each
        subjects = set()
        subscription = await feed.nc.jetstream().subscribe(
            f"{feed.prefix}.>", stream=feed.stream, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        for _ in range(total - 1):
            subjects.add((await subscription.next_msg(timeout=5)).subject)
        await subscription.unsubscribe()
        typed = f"{feed.prefix}.supply.revision.committed"
        assert {f"{typed}.x.%.y", f"{typed}.nl%0A"} <= subjects


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
    """nats.max_age_s / max_bytes / max_msgs and the subjects are applied on every start; what an
    operator changed on the stream (here a description, a per-subject limit, a max age and a subject
    of their own) survives a feed restart, also one that stops the legacy subjects."""
    nc = await connect_nats(nats_url)
    try:
        js = nc.jetstream()
        stream = "T" + uuid.uuid4().hex[:10].upper()
        prefix = "t" + uuid.uuid4().hex[:10]
        subjects = Subjects(prefix, "u" + prefix)
        await ensure_stream(js, stream, subjects)
        created = (await js.stream_info(stream)).config
        assert created.subjects == [f"{prefix}.>", f"u{prefix}.>"]
        assert not created.max_age and created.max_msgs in (None, -1)  # unlimited unless a limit is set
        operator = dataclasses.replace(
            created,
            description="kept by ops",
            max_msgs_per_subject=1000,
            max_age=3600,
            subjects=[*(created.subjects or []), f"ops{prefix}.>"],
        )
        await js.update_stream(operator)
        await ensure_stream(js, stream, subjects)  # a feed restart with the limits left at 0
        kept = (await js.stream_info(stream)).config
        assert (kept.description, kept.max_msgs_per_subject, kept.max_age) == ("kept by ops", 1000, 3600)
        assert kept.subjects == [f"{prefix}.>", f"u{prefix}.>", f"ops{prefix}.>"]
        typed_only = Subjects(prefix, "u" + prefix, legacy=False)  # nats.legacy_subjects: false
        limits = Retention(max_msgs=2, max_bytes=10_000_000)
        await ensure_stream(js, stream, typed_only, retention=limits)
        limited = (await js.stream_info(stream)).config
        assert limited.subjects == [f"{prefix}.>", f"ops{prefix}.>"]
        assert (limited.max_msgs, limited.max_bytes, limited.description) == (2, 10_000_000, "kept by ops")
        for n in range(5):
            await js.publish(f"{prefix}.supply.main", b'{"sequence": %d}' % n, stream=stream)
        state = (await js.stream_info(stream)).state
        assert (state.messages, state.first_seq) == (2, 4)  # the oldest were dropped
    finally:
        await nc.close()
