"""Operation events and clearances: a webhook gets the values of sensitive Attributes in `edits` only
when its clearances cover every tag of the value, re-rendered at delivery from the invocation; the
outbox, NATS and the event stream only ever hold the masked document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest_asyncio
from lorebase_feed.relay import Relay
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhooks import HttpxSender
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_feed_reliability import drain, stream_log
from tests.integration.test_webhooks import KEY, Receiver, sealer, start_cursor
from tests.unit.test_webhook_targets import verified

EMAIL = "ada@example.org"
SALARY = 123456
SCHEMA: dict[str, Any] = {
    "kinds": {
        "Person": {
            "key": ["pid"],
            "attributes": {
                "pid": {"type": "string", "required": True},
                "email": {"type": "string", "sensitivity": ["pii"]},
                "salary": {"type": "integer", "sensitivity": ["pii", "confidential"]},
                "city": {"type": "string"},
            },
        }
    },
    "operations": {
        "hire": {
            "parameters": {
                "pid": {"type": "string", "required": True},
                "email": {"type": "string", "sensitivity": ["pii"]},
                "salary": {"type": "integer"},
                "city": {"type": "string"},
            },
            "edits": [
                {
                    "op": "upsert_record",
                    "kind": "Person",
                    "key": "$pid",
                    "values": {"pid": "$pid", "email": "$email", "salary": "$salary", "city": "$city"},
                }
            ],
            "side_effects": ["person_hired"],
        }
    },
}
HOOKS = "/api/v1/domains/people/webhooks"


@pytest_asyncio.fixture
async def feed(stack: Stack, nats_url: str, monkeypatch: Any) -> AsyncIterator[Feed]:
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    settings = {
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
        # The receivers of these tests listen on loopback.
        "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    }
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "people", "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    async with running_feed(stack, nats_url, relay=False, settings=settings) as running:
        yield running


async def test_cleared_webhooks_see_what_their_clearances_cover(stack: Stack, feed: Feed) -> None:
    receiver = Receiver([])
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        hooks = {}
        for name, clearances in (("none", []), ("pii", ["pii"]), ("both", ["pii", "confidential"])):
            created = await stack.http.post(
                HOOKS,
                json={"url": f"{url}?{name}", "events": ["operation.*"], "clearances": clearances},
                headers=stack.admin,
            )
            assert created.status_code == 201, created.text
            hooks[name] = created.json()
        await start_cursor(stack.rt.db)
        executed = await stack.http.post(
            "/api/v1/domains/people/operations/hire/execute",
            json={"parameters": {"pid": "P-1", "email": EMAIL, "salary": SALARY, "city": "Oslo"}},
            headers=stack.admin,
        )
        assert executed.status_code == 200, executed.text
        result = await deliver_pending(stack.rt.db, sender, sealer(), DeliverySettings())
        assert (result.queued, result.delivered) == (3, 3)
    got: dict[str, dict[str, Any]] = {}
    for headers, body in receiver.requests:
        document = orjson.loads(body)
        assert document["type"] == "operation.person_hired"
        # Signed over exactly what was sent, per webhook.
        name = next(n for n, h in hooks.items() if verified(h["secret"], headers["lorebase-signature"], body))
        got[name] = document
    assert set(got) == {"none", "pii", "both"}
    values = {name: doc["edits"][0]["values"] for name, doc in got.items()}
    assert values["none"] == {"pid": "P-1", "email": "***", "salary": "***", "city": "Oslo"}
    assert values["pii"] == {"pid": "P-1", "email": EMAIL, "salary": "***", "city": "Oslo"}
    # The canonical form, as in the Record (an integer is a decimal string).
    assert values["both"] == {"pid": "P-1", "email": EMAIL, "salary": str(SALARY), "city": "Oslo"}
    for document in got.values():  # sensitive parameters stay masked for everyone
        assert document["parameters"]["email"] == "***" and document["parameters"]["salary"] != "***"
    # No clear value anywhere a reader without clearances looks: the outbox, NATS, the events.
    async with stack.rt.db.engine.connect() as conn:
        stored = [
            r[0] for r in await conn.execute(text("select event from outbox where type like 'operation.%'"))
        ]
    assert len(stored) == 1 and EMAIL not in orjson.dumps(stored[0]).decode()
    assert stored[0]["edits"][0]["values"] == values["none"]
    relay = Relay(stack.rt.db, feed.nc.jetstream(), subjects=feed.subjects)
    await drain(stack, relay)
    js = feed.nc.jetstream()
    info = await js.stream_info(feed.stream)
    assert len(await stream_log(js, feed.stream)) == info.state.messages > 0
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        data = (await js.get_msg(feed.stream, seq)).data or b""
        assert EMAIL.encode() not in data
