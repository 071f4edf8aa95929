"""The web app's sign-in: an API key exchanged for a session cookie, the cookie as a credential (with
CSRF and Origin checks on writes), its end by sign-out, expiry or the revocation of its key, in
keeper (Domain data, agent memory) and in the memory journal alike."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest_asyncio
from sqlalchemy import text

from lorebase.credentials import csrf_token
from tests.integration.conftest import ADMIN_KEY, Stack, open_stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.gateway_server import serving
from tests.integration.memory_helpers import SCOPE, agent, key

SESSION = "/api/v1/web/session"
BRANCHES = "/api/v1/domains/supply/branches"


async def sign_in(stack: Stack, headers: dict[str, str]) -> tuple[str, dict[str, Any], httpx.Response]:
    """Sign in with the key of `headers`; the session's token (from the cookie), answer and response."""
    api_key = headers["Authorization"].removeprefix("Bearer ")
    response = await stack.http.post(SESSION, json={"key": api_key})
    assert response.status_code == 201, response.text
    token = response.headers["set-cookie"].split(";")[0].removeprefix("lorebase_session=")
    stack.http.cookies.clear()  # each request below says which cookie it sends
    return token, response.json(), response


def cookie(token: str, **headers: str) -> dict[str, str]:
    return {"Cookie": f"lorebase_session={token}", **headers}


def writes(token: str) -> dict[str, str]:
    return cookie(token, **{"X-CSRF-Token": csrf_token(token)})


async def test_sign_in_answers_the_session_and_sets_an_http_only_cookie(supply: Stack) -> None:
    editor = await supply.principal("usr_web")
    await supply.grant("supply", "usr_web", "editor")
    token, answer, response = await sign_in(supply, editor)
    assert set(answer) == {"principal", "principal_type", "admin", "expires_at", "csrf_token"}
    assert answer["principal"] == "usr_web" and answer["principal_type"] == "user" and not answer["admin"]
    assert answer["csrf_token"] == csrf_token(token) and len(answer["csrf_token"]) == 64
    assert token not in response.text  # the token is only in the cookie
    set_cookie = response.headers["set-cookie"]
    assert set_cookie.startswith(f"lorebase_session={token}; ")
    attributes = dict(part.strip().partition("=")[::2] for part in set_cookie.split(";")[1:])
    assert attributes == {"HttpOnly": "", "SameSite": "Strict", "Path": "/", "Max-Age": attributes["Max-Age"]}
    assert 28700 <= int(attributes["Max-Age"]) <= 28800  # web.session_ttl_s; no Secure over plain http
    assert response.headers["cache-control"] == "no-store"
    # The cookie authenticates GET and POST reads like the key, and GET /web/session answers the same.
    again = await supply.http.get(SESSION, headers=cookie(token))
    assert again.status_code == 200 and again.json() == answer
    bearer = await supply.http.get(SESSION, headers={"Authorization": f"Bearer {token}"})
    assert bearer.status_code == 200 and bearer.json()["principal"] == "usr_web"
    record = await supply.http.get(
        "/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=cookie(token)
    )
    assert record.status_code == 200, record.text
    # A plain key is not a web session.
    assert (await supply.http.get(SESSION, headers=editor)).status_code == 401
    admin_token, admin_answer, _ = await sign_in(supply, supply.admin)
    assert admin_answer["admin"] is True and admin_answer["principal"] == "usr_admin"
    # Sign-in calls are never steps of an agent session: their answers hold the CSRF token.
    traced = {"Lorebase-Session": "s-web"}
    await supply.http.post(SESSION, json={"key": ADMIN_KEY}, headers=traced)
    await supply.http.get(SESSION, headers={**cookie(admin_token), **traced})
    supply.http.cookies.clear()
    assert (await supply.http.get("/api/v1/sessions/s-web", headers=supply.admin)).status_code == 404


async def test_a_write_with_the_cookie_needs_the_csrf_token_and_its_own_origin(supply: Stack) -> None:
    editor = await supply.principal("usr_web")
    await supply.grant("supply", "usr_web", "editor")
    token, _, _ = await sign_in(supply, editor)
    # POST reads are writes to the CSRF check too (the method decides).
    refused = await supply.http.post(BRANCHES, json={"name": "web-a"}, headers=cookie(token))
    assert refused.status_code == 403, refused.text
    problem = refused.json()
    assert problem["type"].endswith("csrf-token-required") and "X-CSRF-Token" in problem["detail"]
    wrong = await supply.http.post(
        BRANCHES, json={"name": "web-a"}, headers=cookie(token, **{"X-CSRF-Token": "0" * 64})
    )
    assert wrong.status_code == 403
    assert (await supply.http.get(f"{BRANCHES}/web-a", headers=editor)).status_code == 404  # nothing written
    foreign = await supply.http.post(
        BRANCHES, json={"name": "web-a"}, headers={**writes(token), "Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403 and foreign.json()["type"].endswith("cross-origin-request")
    assert (await supply.http.get(f"{BRANCHES}/web-a", headers=editor)).status_code == 404
    made = await supply.http.post(
        BRANCHES, json={"name": "web-a"}, headers={**writes(token), "Origin": "http://lorebase.test"}
    )
    assert made.status_code == 201, made.text
    # The same host over https (TLS ended by a proxy) is this site; another port or host is not.
    tls = await supply.http.post(
        BRANCHES, json={"name": "web-c"}, headers={**writes(token), "Origin": "https://lorebase.test"}
    )
    assert tls.status_code == 201, tls.text
    for origin in ("http://lorebase.test:8081", "http://evil.lorebase.test", "null"):
        refused = await supply.http.post(
            BRANCHES, json={"name": "web-d"}, headers={**writes(token), "Origin": origin}
        )
        assert refused.status_code == 403, origin
    query = await supply.http.post(
        "/api/v1/domains/supply/query", json={"kind": "Supplier", "limit": 1}, headers=writes(token)
    )
    assert query.status_code == 200, query.text
    # A request with an Authorization header is not the cookie's: no CSRF token needed.
    agent_write = await supply.http.post(
        BRANCHES, json={"name": "web-b"}, headers={**editor, **cookie(token)}
    )
    assert agent_write.status_code == 201, agent_write.text
    # A sign-in from another origin is refused, and starts nothing.
    before = await supply.count("api_keys")
    api_key = editor["Authorization"].removeprefix("Bearer ")
    login = await supply.http.post(SESSION, json={"key": api_key}, headers={"Origin": "https://evil.example"})
    assert login.status_code == 403 and await supply.count("api_keys") == before


async def test_sign_out_ends_the_session_and_clears_the_cookie(supply: Stack) -> None:
    viewer = await supply.principal("usr_web")
    await supply.grant("supply", "usr_web", "viewer")
    token, _, _ = await sign_in(supply, viewer)
    assert (await supply.http.delete(SESSION, headers=cookie(token))).status_code == 403  # no CSRF token
    assert (await supply.http.get(SESSION, headers=cookie(token))).status_code == 200
    ended = await supply.http.delete(SESSION, headers=writes(token))
    assert ended.status_code == 204 and ended.content == b""
    assert ended.headers["set-cookie"].startswith("lorebase_session=; ")
    assert "Max-Age=0" in ended.headers["set-cookie"]
    supply.http.cookies.clear()
    assert (await supply.http.get(SESSION, headers=cookie(token))).status_code == 401
    gone = await supply.http.get(
        "/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=cookie(token)
    )
    assert gone.status_code == 401
    # Ending it again: 401, and the cookie is cleared all the same; the key itself still works.
    again = await supply.http.delete(SESSION, headers=writes(token))
    assert again.status_code == 401 and "Max-Age=0" in again.headers["set-cookie"]
    assert (await supply.http.get("/api/v1/domains/supply", headers=viewer)).status_code == 200


async def test_a_bad_key_signs_nobody_in_and_creates_nothing(supply: Stack) -> None:
    keys, audit = await supply.count("api_keys"), await supply.count("audit_log")
    for body in ({"key": "lbk_not-a-key"}, {"key": "ünïcode"}):
        refused = await supply.http.post(SESSION, json=body)
        assert refused.status_code == 401, refused.text
        assert "set-cookie" not in refused.headers
    assert (await supply.http.post(SESSION, json={})).status_code == 422
    assert (await supply.http.post(SESSION, json={"key": "x", "extra": 1})).status_code == 422
    # A revoked key, and a session token offered as a key, start nothing either.
    headers = await supply.principal("usr_web")
    token, _, _ = await sign_in(supply, headers)
    keys, audit = await supply.count("api_keys"), await supply.count("audit_log")
    chained = await supply.http.post(SESSION, json={"key": token})
    assert chained.status_code == 401 and "cannot start another" in chained.json()["detail"]
    assert (await supply.count("api_keys"), await supply.count("audit_log")) == (keys, audit)


async def test_sign_in_spends_the_unauthenticated_allowance(database_url: str) -> None:
    async with open_stack(
        database_url,
        LOREBASE_HTTP__UNAUTHENTICATED_RATE_LIMIT__BURST="2",
        LOREBASE_HTTP__UNAUTHENTICATED_RATE_LIMIT__PER_SECOND="0.001",
    ) as stack:
        statuses = [(await stack.http.post(SESSION, json={"key": f"bad-{n}"})).status_code for n in range(3)]
        assert statuses == [401, 401, 429]


async def test_a_session_expires(database_url: str) -> None:
    async with open_stack(database_url, LOREBASE_WEB__SESSION_TTL_S="0.5") as stack:
        token, _, response = await sign_in(stack, stack.admin)
        assert "Max-Age=1;" in response.headers["set-cookie"] + ";"  # the seconds left, rounded up
        status = 200
        for _ in range(100):  # the session's half second passes
            status = (await stack.http.get("/api/v1/domains", headers=cookie(token))).status_code
            if status == 401:
                break
            await asyncio.sleep(0.05)
        assert status == 401
        assert (await stack.http.get(SESSION, headers=cookie(token))).status_code == 401
        # Signing in again forgets the expired session's row.
        await sign_in(stack, stack.admin)
        async with stack.rt.db.engine.connect() as conn:
            sessions = await conn.scalar(
                text("select count(*) from api_keys where parent_key_id is not null")
            )
        assert sessions == 1


async def test_revoking_the_key_ends_its_sessions_in_keeper_memory_and_the_journal(supply: Stack) -> None:
    headers = await agent(supply, "agt_web")
    await supply.grant("supply", "agt_web", "viewer")
    token, _, _ = await sign_in(supply, headers)
    record = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"
    memory = {"content": "seen in the web app", "scope": SCOPE}
    changes = {"contract_version": 1, "scope": SCOPE, "query": {}}
    assert (await supply.http.get(record, headers=cookie(token))).status_code == 200
    written = await supply.http.post(
        "/api/v1/memory/records", json={**memory, "idempotency_key": key()}, headers=writes(token)
    )
    assert written.status_code == 201, written.text
    assert written.json()["record"]["created_by"] == "agt_web"
    journal = await supply.http.post("/api/v1/memory/changes", json=changes, headers=writes(token))
    assert journal.status_code == 200, journal.text
    # The admin revokes the key the session was made from.
    async with supply.rt.db.engine.connect() as conn:
        key_id = await conn.scalar(
            text("select id from api_keys where principal_id = 'agt_web' and parent_key_id is null")
        )
    revoked = await supply.http.delete(f"/api/v1/principals/agt_web/keys/{key_id}", headers=supply.admin)
    assert revoked.status_code == 200, revoked.text
    assert (await supply.http.get(record, headers=cookie(token))).status_code == 401
    assert (
        await supply.http.post(
            "/api/v1/memory/records", json={**memory, "idempotency_key": key()}, headers=writes(token)
        )
    ).status_code == 401
    assert (
        await supply.http.post("/api/v1/memory/changes", json=changes, headers=writes(token))
    ).status_code == 401
    assert (await supply.http.get(SESSION, headers=cookie(token))).status_code == 401
    # The revoked key signs nobody in again.
    keys = await supply.count("api_keys")
    again = await supply.http.post(SESSION, json={"key": headers["Authorization"].removeprefix("Bearer ")})
    assert again.status_code == 401 and await supply.count("api_keys") == keys


@pytest_asyncio.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url) as running:
        yield running


async def test_the_event_stream_with_only_the_cookie(supply: Stack, feed: Feed) -> None:
    feed.servicer.stream_limits = dataclasses.replace(feed.servicer.stream_limits, max_connection_s=1)
    viewer = await supply.principal("usr_web")
    await supply.grant("supply", "usr_web", "viewer")
    token, _, _ = await sign_in(supply, viewer)
    events = "/api/v1/domains/supply/branches/main/events"
    response = await supply.http.get(events, params={"last_event_id": "0"}, headers=cookie(token))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert [f for f in response.text.split("\n\n") if f.startswith("id:")]
    assert (await supply.http.get(events, headers=cookie("lbs_unknown"))).status_code == 401


async def test_the_cookie_is_secure_over_tls_and_behind_a_trusted_proxy(supply: Stack) -> None:
    api_key = supply.admin["Authorization"].removeprefix("Bearer ")
    transport = httpx.ASGITransport(app=supply.http._transport.app)  # type: ignore[attr-defined]
    async with httpx.AsyncClient(transport=transport, base_url="https://lorebase.test") as tls:
        response = await tls.post(SESSION, json={"key": api_key})
        assert response.status_code == 201 and "; Secure" in response.headers["set-cookie"]
    async with serving(supply.gateway, LOREBASE_HTTP__TRUSTED_PROXIES='["127.0.0.1"]') as served:
        async with httpx.AsyncClient(base_url=served.url) as client:
            proxied = await client.post(
                SESSION, json={"key": api_key}, headers={"X-Forwarded-Proto": "https"}
            )
            assert proxied.status_code == 201 and "; Secure" in proxied.headers["set-cookie"]
            plain = await client.post(SESSION, json={"key": api_key})
            assert plain.status_code == 201 and "Secure" not in plain.headers["set-cookie"]
    async with serving(supply.gateway) as served:  # X-Forwarded-Proto from a proxy nobody trusts
        async with httpx.AsyncClient(base_url=served.url) as client:
            spoofed = await client.post(
                SESSION, json={"key": api_key}, headers={"X-Forwarded-Proto": "https"}
            )
            assert spoofed.status_code == 201 and "Secure" not in spoofed.headers["set-cookie"]


async def test_an_open_event_stream_of_a_session_ends_when_its_key_is_revoked(
    supply: Stack, feed: Feed
) -> None:
    await supply.principal("usr_follow")
    made = (await supply.http.post("/api/v1/principals/usr_follow/keys", headers=supply.admin)).json()
    await supply.grant("supply", "usr_follow", "viewer")
    token, _, _ = await sign_in(supply, {"Authorization": f"Bearer {made['key']}"})
    # What the gateway sends the feed for a request with the cookie: the session's token.
    stream = feed.client.events(credential=f"Bearer {token}", domain="supply", branch="main")
    await stream.first()
    revoked = await supply.http.delete(
        f"/api/v1/principals/usr_follow/keys/{made['id']}", headers=supply.admin
    )
    assert revoked.status_code == 200, revoked.text
    async with asyncio.timeout(20):
        items = [item async for item in stream]  # ends within agents.feed.reauthorize_interval_s
    assert all(item.heartbeat for item in items)
    events = "/api/v1/domains/supply/branches/main/events"
    assert (await supply.http.get(events, headers=cookie(token))).status_code == 401


async def test_the_secure_flag_can_be_forced_either_way(database_url: str) -> None:
    for setting, secure in (("always", True), ("never", False)):
        async with open_stack(database_url, LOREBASE_WEB__COOKIE_SECURE=setting) as stack:
            api_key = stack.admin["Authorization"].removeprefix("Bearer ")
            transport = httpx.ASGITransport(app=stack.http._transport.app)  # type: ignore[attr-defined]
            for base in ("http://lorebase.test", "https://lorebase.test"):
                async with httpx.AsyncClient(transport=transport, base_url=base) as client:
                    response = await client.post(SESSION, json={"key": api_key})
                    assert response.status_code == 201
                    assert ("; Secure" in response.headers["set-cookie"]) is secure, (setting, base)
                    ended = await client.delete(SESSION, headers={"Authorization": "Bearer x"})
                    assert ("; Secure" in ended.headers["set-cookie"]) is secure, (setting, base)
