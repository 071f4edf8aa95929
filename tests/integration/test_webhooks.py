"""Webhooks: the registry through the gateway and the feed, and delivery passes to a real receiver."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
import pytest_asyncio
from lorebase_scribe.webhook_attempts import DeliverySettings
from lorebase_scribe.webhook_delivery import deliver_pending
from lorebase_scribe.webhook_fan_out import CURSOR
from lorebase_scribe.webhooks import HttpxSender
from sqlalchemy import text
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from lorebase.config import load_settings
from lorebase.ids import utc_now
from lorebase.webhook_secrets import Sealer
from tests.integration.conftest import Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_feed_changes import raise_risk
from tests.unit.test_webhook_targets import verified

HOOKS = "/api/v1/domains/supply/webhooks"
KEY = "k" * 40


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Feed]:
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    settings = {
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
        # The receivers of these tests listen on loopback.
        "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    }
    async with running_feed(supply, nats_url, relay=False, settings=settings) as running:
        yield running


async def start_cursor(db: Any) -> None:
    """Run fan-out passes until the webhook cursor is set (at the fence: from the next commit on)."""
    from lorebase_scribe.webhook_fan_out import fan_out

    async with asyncio.timeout(20):
        while await db.read("cursor", lambda txn: txn.cursor(CURSOR)) is None:
            await fan_out(db)


def pending_rows(hook: str, count: int, *, due: datetime) -> list[dict[str, Any]]:
    """Rows for WebhooksTxn.add_deliveries: `count` pending deliveries of `hook`, sequences 0…,
    due at `due`."""
    return [
        {
            "id": f"dlv_{n}",
            "webhook_id": hook,
            "sequence": n,
            "type": "revision.committed",
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": due,
            "created_at": utc_now(),
        }
        for n in range(count)
    ]


def sealer() -> Sealer:
    return Sealer.from_settings(
        encryption_key="secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        previous_encryption_keys=[],
        allow_unsealed_keys=False,
    )


class Receiver:
    """A real HTTP server on loopback that answers from a script of statuses (then 200)."""

    def __init__(self, script: list[int]) -> None:
        self.script = script
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.server: asyncio.Server | None = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")[1:]
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append((headers, body))
        status = self.script.pop(0) if self.script else 200
        extra = "Location: http://169.254.169.254/latest/meta-data\r\n" if status == 302 else ""
        writer.write(
            f"HTTP/1.1 {status} X\r\n{extra}Content-Length: 2\r\nConnection: close\r\n\r\nok".encode()
        )
        await writer.drain()
        writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/hook"

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


async def test_webhook_registry(supply: Stack, feed: Feed) -> None:
    created = await supply.http.post(
        HOOKS, json={"url": "https://agents.example.com/lorebase", "branches": ["main"]}, headers=supply.admin
    )
    assert created.status_code == 201, created.text
    hook = created.json()
    assert hook["secret"].startswith("lbwh_")
    # The same HMAC key as a Standard Webhooks secret: whsec_ + base64 of SHA-256(secret).
    assert (
        hook["standard_webhooks_secret"]
        == "whsec_" + base64.b64encode(hashlib.sha256(hook["secret"].encode()).digest()).decode()
    )
    assert hook["events"] == ["revision.committed", "operation.*"] and hook["branches"] == ["main"]
    listed = (await supply.http.get(HOOKS, headers=supply.admin)).json()["webhooks"]
    assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
    async with supply.rt.db.engine.connect() as conn:
        stored = await conn.scalar(text("select signing_key from webhooks"))
    assert stored.startswith("aesgcm:") and hook["secret"] not in stored
    patched = await supply.http.patch(
        f"{HOOKS}/{hook['id']}", json={"clearances": ["pii"]}, headers=supply.admin
    )
    assert patched.status_code == 200 and patched.json()["clearances"] == ["pii"]
    # Bad input answers 4xx naming what to change.
    for body in (
        {"url": "ftp://x.example/"},
        {"url": "https://x.example/", "events": ["revision.deleted"]},
        {"url": "https://x.example/", "clearances": ["secret"]},
        {"url": "https://x.example/", "colour": "red"},
        {},
    ):
        response = await supply.http.post(HOOKS, json=body, headers=supply.admin)
        assert response.status_code in (400, 422), (body, response.text)
    editor = await supply.principal("usr_hooks")
    await supply.grant("supply", "usr_hooks", "editor")
    assert (await supply.http.get(HOOKS, headers=editor)).status_code == 403
    assert (await supply.http.delete(f"{HOOKS}/whk_nope", headers=supply.admin)).status_code == 404
    deleted = await supply.http.delete(f"{HOOKS}/{hook['id']}", headers=supply.admin)
    assert deleted.status_code == 200
    assert (await supply.http.get(HOOKS, headers=supply.admin)).json()["webhooks"] == []
    async with supply.rt.db.engine.connect() as conn:
        actions = [
            r[0]
            for r in await conn.execute(
                text("select action from audit_log where action like 'webhook.%' order by id")
            )
        ]
    assert actions == ["webhook.create", "webhook.update", "webhook.delete"]


async def test_an_admin_narrowed_to_kinds_cannot_register_a_webhook(supply: Stack, feed: Feed) -> None:
    """Deliveries carry the changes of every Kind: a grant narrowed to Kinds cannot subscribe to them."""
    narrowed = await supply.principal("usr_narrow_admin")
    await supply.grant("supply", "usr_narrow_admin", "admin", kinds=["Supplier"])
    response = await supply.http.post(HOOKS, json={"url": "https://a.example/"}, headers=narrowed)
    assert response.status_code == 403, response.text
    assert "narrowed" in response.json()["detail"]
    assert await supply.count("webhooks") == 0


async def test_targets_are_checked_at_creation(
    supply: Stack, nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12, item 6: targets were only checked at delivery, and `[::ffff:0:7f00:1]` got through."""
    monkeypatch.setenv("LOREBASE_TEST_WEBHOOK_KEY", KEY)
    settings = {
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY",
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": '["https", "http"]',
    }
    names = {"internal.example.com": ["10.0.0.5"], "hooks.example.com": ["93.184.216.34"]}

    async def resolver(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError(f"{host} does not resolve")
        return names[host]

    async with running_feed(supply, nats_url, relay=False, settings=settings) as running:
        running.servicer.webhooks.r = dataclasses.replace(running.servicer.webhooks.r, resolver=resolver)
        for url, reason in (
            ("https://[::ffff:0:7f00:1]/hook", "IPv4-translated (SIIT) address of 127.0.0.1"),
            ("http://0x7f.1/hook", "127.0.0.1, a loopback address"),
            ("https://localhost/hook", "loopback name"),
            ("https://internal.example.com/hook", "resolves to 10.0.0.5"),
            ("https://ops@hooks.example.com/hook", "user name"),
            ("gopher://hooks.example.com/", "webhooks.allowed_schemes"),
        ):
            refused = await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
            assert refused.status_code == 422, (url, refused.text)
            problem = refused.json()
            assert [issue["path"] for issue in problem["issues"]] == ["url"]
            assert reason in problem["detail"], problem["detail"]
        # A public name, and a name that does not resolve yet (each delivery checks it again).
        for url in ("https://hooks.example.com/hook", "https://later.example.net/hook"):
            created = await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
            assert created.status_code == 201, created.text
        patched = await supply.http.patch(
            f"{HOOKS}/{created.json()['id']}",
            json={"url": "https://[64:ff9b::a9fe:a9fe]/"},
            headers=supply.admin,
        )
        assert patched.status_code == 422 and "169.254.169.254" in patched.json()["detail"]
    assert await supply.count("webhooks") == 2


async def test_create_without_an_encryption_key_is_409(supply: Stack, nats_url: str) -> None:
    async with running_feed(supply, nats_url, relay=False):
        response = await supply.http.post(HOOKS, json={"url": "https://a.example/"}, headers=supply.admin)
    assert response.status_code == 409 and response.json()["type"].endswith("encryption_key_required")


async def test_delivery_retries_with_the_same_idempotency_key_then_succeeds(
    supply: Stack, feed: Feed
) -> None:
    receiver = Receiver([500, 302])
    settings = DeliverySettings(max_attempts=5, backoff_initial_s=60)
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        hook = (
            await supply.http.post(
                HOOKS, json={"url": url, "events": ["revision.committed"]}, headers=supply.admin
            )
        ).json()
        await start_cursor(supply.rt.db)  # deliveries start with the next commit
        revision = await raise_risk(supply, 71)
        first = await deliver_pending(supply.rt.db, sender, sealer(), settings)
        assert (first.queued, first.failed) == (1, 1)
        # Not due yet: the next pass sends nothing; later ones follow the schedule.
        assert (await deliver_pending(supply.rt.db, sender, sealer(), settings)).failed == 0
        later = utc_now() + timedelta(minutes=5)
        assert (await deliver_pending(supply.rt.db, sender, sealer(), settings, now=later)).failed == 1  # 302
        assert (
            await deliver_pending(supply.rt.db, sender, sealer(), settings, now=later + timedelta(hours=1))
        ).delivered == 1
    assert len(receiver.requests) == 3, "the redirect was not followed"
    keys = {h["idempotency-key"] for h, _ in receiver.requests}
    deliveries = {h["lorebase-delivery"] for h, _ in receiver.requests}
    assert len(keys) == 1 and keys.pop().startswith("evt_") and len(deliveries) == 1
    standard = Webhook(hook["standard_webhooks_secret"])  # the reference verifier of Standard Webhooks
    for headers, body in receiver.requests:
        assert verified(hook["secret"], headers["lorebase-signature"], body)
        assert standard.verify(body, dict(headers))["revision"] == revision
        assert headers["webhook-id"] == headers["idempotency-key"]  # the same on every attempt
        with pytest.raises(WebhookVerificationError):
            standard.verify(body + b" ", dict(headers))
        assert headers["lorebase-event"] == "revision.committed"
        assert orjson.loads(body)["revision"] == revision
        assert headers["host"] == url.split("/")[2]


async def test_delivery_marked_dead_after_max_attempts(supply: Stack, feed: Feed) -> None:
    receiver = Receiver([500] * 10)
    settings = DeliverySettings(max_attempts=2, backoff_initial_s=1)
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        await raise_risk(supply, 72)
        await deliver_pending(supply.rt.db, sender, sealer(), settings)
        result = await deliver_pending(
            supply.rt.db, sender, sealer(), settings, now=utc_now() + timedelta(hours=1)
        )
    assert result.dead == 1 and len(receiver.requests) == 2
    async with supply.rt.db.engine.connect() as conn:
        status, error = (await conn.execute(text("select status, last_error from webhook_deliveries"))).one()
    assert status == "dead" and "500" in error


async def test_private_target_refused_at_delivery(supply: Stack, feed: Feed) -> None:
    receiver = Receiver([])
    async with receiver as url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",))  # allow_private_targets off
        await supply.http.post(HOOKS, json={"url": url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        await raise_risk(supply, 73)
        result = await deliver_pending(
            supply.rt.db, sender, sealer(), dataclasses.replace(DeliverySettings())
        )
    assert result.failed == 1 and receiver.requests == []
    async with supply.rt.db.engine.connect() as conn:
        error = await conn.scalar(text("select last_error from webhook_deliveries"))
    assert "loopback" in error


async def test_a_new_webhook_gets_only_the_events_committed_after_its_creation(
    supply: Stack, feed: Feed
) -> None:
    """The fan-out cursor is still behind the first commit when the second webhook is created (no
    pass ran in between): that webhook gets only the later commit, the older webhook both."""
    early, late = Receiver([]), Receiver([])
    async with early as early_url, late as late_url, httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        await supply.http.post(HOOKS, json={"url": early_url}, headers=supply.admin)
        await start_cursor(supply.rt.db)
        before = await raise_risk(supply, 61)
        async with supply.rt.db.engine.connect() as conn:
            committed = await conn.scalar(
                text("select sequence from outbox where revision = :r and type = 'revision.committed'"),
                {"r": before},
            )
        cursor = await supply.rt.db.read("cursor", lambda txn: txn.cursor(CURSOR))
        assert cursor is not None and cursor < committed  # the first commit is not fanned out yet
        created = await supply.http.post(HOOKS, json={"url": late_url}, headers=supply.admin)
        assert created.status_code == 201, created.text
        after = await raise_risk(supply, 62)
        result = await deliver_pending(supply.rt.db, sender, sealer(), DeliverySettings())
    assert (result.queued, result.delivered) == (3, 3)
    assert [orjson.loads(body)["revision"] for _, body in early.requests] == [before, after]
    assert [orjson.loads(body)["revision"] for _, body in late.requests] == [after]


async def test_old_delivered_and_dead_deliveries_are_deleted(supply: Stack, feed: Feed) -> None:
    """Retention: a pass deletes the delivered and dead deliveries whose last attempt ended more
    than webhooks.retention_days ago, more than one batch of them, and keeps pending ones however
    old, and recent ones."""
    created = await supply.http.post(HOOKS, json={"url": "http://127.0.0.1:9/hook"}, headers=supply.admin)
    hook = created.json()["id"]
    kinds = ["old delivered"] * 2400 + ["old dead"] * 200 + ["recent delivered", "old pending"]
    rows = pending_rows(hook, len(kinds), due=utc_now() + timedelta(days=1))  # the passes send nothing
    await supply.rt.db.run_interaction("add", lambda txn: txn.add_deliveries(rows))
    async with supply.rt.db.engine.begin() as conn:
        for kind, status, days in (
            ("old delivered", "delivered", 20),
            ("old dead", "dead", 15),
            ("recent delivered", "delivered", 1),
        ):
            ids = [f"dlv_{n}" for n, k in enumerate(kinds) if k == kind]
            await conn.execute(
                text(
                    "update webhook_deliveries set status = :status, attempts = 1, "
                    "finished_at = now() - make_interval(days => :days) where id = any(:ids)"
                ),
                {"status": status, "days": days, "ids": ids},
            )
        await conn.execute(
            text(
                "update webhook_deliveries set attempts = 3, created_at = now() - interval '60 days' "
                "where id = :id"
            ),
            {"id": f"dlv_{kinds.index('old pending')}"},
        )
    settings = DeliverySettings.of(load_settings({}).model.webhooks)
    assert settings.retention_days == 14  # the documented default
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = HttpxSender(client, allowed_schemes=("http",), allow_private_targets=True)
        result = await deliver_pending(supply.rt.db, sender, sealer(), settings)
        assert result.purged == 2600
        async with supply.rt.db.engine.connect() as conn:
            left: dict[str, int] = dict(
                (await conn.execute(text("select status, count(*) from webhook_deliveries group by 1"))).all()
            )
        assert left == {"delivered": 1, "pending": 1}
        again = await deliver_pending(
            supply.rt.db, sender, sealer(), dataclasses.replace(settings, retention_days=0.5)
        )
    assert again.purged == 1 and await supply.count("webhook_deliveries") == 1
