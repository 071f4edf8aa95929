"""A schema change on every feed: the event stream, NATS and webhooks say `schema_changed: true` for
its Revision (and false for the others)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
import pytest_asyncio
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhooks import HttpxSender
from nats.js.api import ConsumerConfig, DeliverPolicy

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_feed_events import next_event, opened
from tests.integration.test_schema_changes import RENAME_TIER, change
from tests.integration.test_webhooks import HOOKS, KEY, Receiver, sealer, start_cursor


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Feed]:
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    settings = {
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
        "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    }
    async with running_feed(supply, nats_url, relay=False, settings=settings) as running:
        yield running


async def test_event_stream_nats_and_webhooks_say_schema_changed(supply: Stack, feed: Feed) -> None:
    receiver = Receiver([])
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        hook = await supply.http.post(
            HOOKS, json={"url": url, "events": ["revision.committed"]}, headers=supply.admin
        )
        assert hook.status_code == 201, hook.text
        await start_cursor(supply.rt.db)
        dry = await change(supply, {"changes": [RENAME_TIER], "dry_run": True})
        assert dry.json()["touches"]["webhooks"] == [hook.json()["id"]]
        changed = await change(supply, {"changes": [RENAME_TIER], "message": "tier is supplier_tier"})
        assert changed.status_code == 200, changed.text
        revision = changed.json()["revision"]
        result = await deliver_pending(supply.rt.db, sender, sealer(), DeliverySettings())
        assert result.delivered == 1
    delivered = orjson.loads(receiver.requests[0][1])
    assert delivered["revision"] == revision and delivered["schema_changed"] is True

    while await feed.relay.publish_pending():
        pass
    # The event stream (missed events, as a reconnecting SSE client gets them).
    stream = await opened(feed, last_event_id="0")
    try:
        events = [orjson.loads((await next_event(stream)).data) for _ in range(3)]
    finally:
        stream.cancel()
    assert [e["schema_changed"] for e in events] == [False, False, True]
    assert events[-1]["revision"] == revision

    # NATS: the relay published it, and a consumer reads it.
    js = feed.nc.jetstream()
    durable = "s" + uuid.uuid4().hex[:8]
    subscription = await js.pull_subscribe(
        f"{feed.prefix}.supply.revision.committed.>",
        durable=durable,
        stream=feed.stream,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
    )
    messages = await subscription.fetch(batch=3, timeout=5)
    published = [orjson.loads(m.data) for m in messages]
    await subscription.unsubscribe()
    assert [e["schema_changed"] for e in published] == [False, False, True]
    assert published[-1]["revision"] == revision
