"""The outbox relay publishes committed events to a real JetStream exactly once per sequence."""

from __future__ import annotations

import uuid

import orjson
from lorebase_feed.relay import Relay, connect_nats, ensure_stream, subject_for
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import text

from tests.integration.conftest import Stack


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
