"""The vault on the bus and in webhooks (issue 15 §2): operation events hold refs, never vault values
(the outbox, NATS, the changes feed); a webhook delivery reads the vault when it is sent, so a
delivery still pending at the erasure arrives with `[erased]`."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
import pytest_asyncio
from lorebase_feed.relay import Relay
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhooks import HttpxSender
from sqlalchemy import text

from tests.integration.conftest import Stack, open_stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_erasure import KEY_ENV, SCHEMA, SECRET, D, dump_database
from tests.integration.test_feed_reliability import drain
from tests.integration.test_webhooks import KEY, Receiver, sealer, start_cursor

HOOK_SETTINGS = {
    **KEY_ENV,
    "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
    "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
}


@pytest_asyncio.fixture
async def crm_feed(
    database_url: str, nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Stack, Feed]]:
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    async with open_stack(database_url, **HOOK_SETTINGS) as stack:
        response = await stack.http.post(
            "/api/v1/domains", json={"name": "crm", "schema": SCHEMA}, headers=stack.admin
        )
        assert response.status_code == 201, response.text
        async with running_feed(stack, nats_url, relay=False, settings=HOOK_SETTINGS) as feed:
            yield stack, feed


async def _contact(stack: Stack, segment: str) -> None:
    response = await stack.http.post(
        D + "/operations/set_contact/execute",
        json={"parameters": {"key": "C-1", "email": SECRET, "segment": segment}},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text


async def test_pending_deliveries_read_the_vault_when_sent(crm_feed: tuple[Stack, Feed]) -> None:
    stack, feed = crm_feed
    receiver = Receiver([])
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        for name, clearances in (("none", []), ("pii", ["pii"])):
            created = await stack.http.post(
                D + "/webhooks",
                json={"url": f"{url}?{name}", "events": ["operation.*"], "clearances": clearances},
                headers=stack.admin,
            )
            assert created.status_code == 201, created.text
        await start_cursor(stack.rt.db)
        imported = await stack.http.post(
            D + "/imports",
            json={"records": [{"kind": "Customer", "values": {"id": "C-1", "name": "Ada", "email": SECRET}}]},
            headers=stack.admin,
        )
        assert imported.status_code == 200, imported.text
        await _contact(stack, "gold")
        result = await deliver_pending(stack.rt.db, sender, sealer(), DeliverySettings())
        assert result.delivered == 2
        bodies = [orjson.loads(body) for _, body in receiver.requests]
        cleared = [b for b in bodies if b["edits"][0]["values"]["email"] != "***"]
        assert len(cleared) == 1 and cleared[0]["edits"][0]["values"]["email"] == SECRET, bodies
        assert cleared[0]["parameters"]["email"] == "***"  # parameters are masked for every webhook
        masked = [b for b in bodies if b is not cleared[0]][0]
        assert masked["parameters"]["email"] == "***" and SECRET not in orjson.dumps(masked).decode()

        # A second execution's deliveries are still pending when the Record is erased.
        receiver.requests.clear()
        await _contact(stack, "silver")
        erased = await stack.http.post(
            D + "/erasures", json={"records": ["Customer/C-1"], "reason": "request"}, headers=stack.admin
        )
        assert erased.status_code == 201, erased.text
        result = await deliver_pending(stack.rt.db, sender, sealer(), DeliverySettings())
        assert result.delivered == 2
    for _, body in receiver.requests:
        assert SECRET.encode() not in body
        document = orjson.loads(body)
        assert document["edits"][0]["values"]["email"] in ("[erased]", "***")
        assert document["parameters"]["email"] in ("[erased]", "***")
    assert any(orjson.loads(b)["edits"][0]["values"]["email"] == "[erased]" for _, b in receiver.requests)

    # Nothing on the bus, ever: every outbox event and every NATS message, before and after.
    async with stack.rt.db.engine.connect() as conn:
        events = [r[0] for r in await conn.execute(text("select event from outbox"))]
    assert events and all(SECRET not in orjson.dumps(e).decode() for e in events)
    relay = Relay(stack.rt.db, feed.nc.jetstream(), subjects=feed.subjects)
    await drain(stack, relay)
    js = feed.nc.jetstream()
    info = await js.stream_info(feed.stream)
    assert info.state.messages >= 4
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        assert SECRET.encode() not in ((await js.get_msg(feed.stream, seq)).data or b"")
    # The event stream (replayed from the start; a short connection makes the test transport end it).
    feed.servicer.stream_limits = dataclasses.replace(feed.servicer.stream_limits, max_connection_s=1)
    stream = await stack.http.get(
        D + "/branches/main/events", params={"last_event_id": "0"}, headers=stack.admin
    )
    assert stream.status_code == 200 and "event: revision" in stream.text, stream.text
    assert SECRET not in stream.text
    changes = await stack.http.get(D + "/branches/main/changes", headers=stack.admin)
    assert changes.status_code == 200 and SECRET not in changes.text, changes.text
    assert SECRET not in await dump_database(stack)
