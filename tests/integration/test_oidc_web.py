"""The web app's "Sign in with <issuer>" at the HTTP level, against a real provider process
(tests/oidc/provider.py) with a confidential web client: the authorization code flow with PKCE run by
the gateway ends in the session cookie the key sign-in sets, holding the access token; the cookie
reads what the person's groups grant, its writes need the CSRF token, and sign-out ends the token
in Lorebase. A callback this browser did not start (no cookie, another state), a provider's error,
and tokens of an untrusted issuer, expired or for another audience sign nobody in. Without a web
client the web app is offered no provider (tests/integration/test_oidc.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import pytest_asyncio

from tests.integration.conftest import Stack, open_stack
from tests.oidc.provider import start_provider, stop_provider

BASE = "http://lorebase.test"  # the stack's client (tests.integration.conftest.open_stack)
CALLBACK = "/api/v1/web/oidc/callback"
START = "/api/v1/web/oidc/corp/start"


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[str, str, str]]:
    """The provider, and the confidential web client registered there: (issuer, id, secret)."""
    process, url = start_provider("--user", "Erin", "--groups", "supply-readers")
    try:
        registered = httpx.post(
            url + "/register",
            json={"redirect_uris": [BASE + CALLBACK], "token_endpoint_auth_method": "client_secret_post"},
            trust_env=False,
        ).json()
        yield url, registered["client_id"], registered["client_secret"]
    finally:
        stop_provider(process)


@pytest_asyncio.fixture
async def stack(database_url: str, provider: tuple[str, str, str]) -> AsyncIterator[Stack]:
    issuer, client_id, secret = provider
    issuers = [
        {
            "issuer": issuer,
            "audience": "lorebase",
            "roles": {"supply-readers": [{"domain": "supply", "role": "viewer"}]},
            "web": {"id": "corp", "label": "Corp SSO", "client_id": client_id, "client_secret": secret},
        }
    ]
    async with open_stack(database_url, LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps(issuers)) as opened:
        await opened.supply()
        yield opened


async def _to_callback(stack: Stack, next_path: str = "/d/supply") -> httpx.URL:
    """Start a sign-in and follow the provider (who signs the person in at once) back: the callback's
    URL, not yet called."""
    started = await stack.http.get(START, params={"next": next_path})
    assert started.status_code == 302, started.text
    assert "lorebase_oidc=" in started.headers["set-cookie"]
    asked = parse_qs(urlsplit(started.headers["location"]).query)
    assert asked["code_challenge_method"] == ["S256"] and asked["nonce"] and asked["state"]
    assert asked["redirect_uri"] == [BASE + CALLBACK]
    async with httpx.AsyncClient(trust_env=False) as http:
        authorized = await http.get(started.headers["location"])
    assert authorized.status_code == 302, authorized.text
    return httpx.URL(authorized.headers["location"])


async def _misbehave(provider: str, **claims: object) -> None:
    async with httpx.AsyncClient(trust_env=False) as http:
        assert (await http.post(provider + "/next", json=claims)).status_code == 200


async def test_sign_in_with_the_provider_ends_in_the_session_cookie(
    stack: Stack, provider: tuple[str, str, str]
) -> None:
    offered = await stack.http.get("/api/v1/web/identity-providers")
    assert offered.json() == {
        "providers": [
            {"id": "corp", "label": "Corp SSO", "issuer": provider[0], "start": START},
        ]
    }
    callback = await _to_callback(stack)
    finished = await stack.http.get(callback.path, params=callback.params)
    assert finished.status_code == 303, finished.text
    assert finished.headers["location"] == "/app/d/supply"
    cookies = finished.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("lorebase_session="))
    assert "HttpOnly" in session and "SameSite=Strict" in session
    assert any(c.startswith("lorebase_oidc=;") and "Max-Age=0" in c for c in cookies)

    # The cookie is the session: who it is, what the groups grant, CSRF on writes.
    described = await stack.http.get("/api/v1/web/session")
    assert described.status_code == 200, described.text
    assert described.json()["principal"] == "usr_erin"
    domains = await stack.http.get("/api/v1/domains")
    assert [d["name"] for d in domains.json()["domains"]] == ["supply"]
    assert (await stack.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001")).status_code == 200
    body = {"parameters": {"key": "S-1001", "risk_score": 61}, "message": "from the web"}
    execute = "/api/v1/domains/supply/operations/update_supplier/execute"
    refused = await stack.http.post(execute, json=body)
    assert refused.status_code == 403 and refused.json()["code"] == "csrf-token-required"
    csrf = {"X-CSRF-Token": described.json()["csrf_token"]}
    forbidden = await stack.http.post(execute, json=body, headers=csrf)  # a viewer: the policy says no
    assert forbidden.status_code == 403 and forbidden.json()["code"] == "forbidden"

    # Sign-out ends the token in Lorebase, not only in this browser.
    token = stack.http.cookies["lorebase_session"]
    ended = await stack.http.delete("/api/v1/web/session", headers=csrf)
    assert ended.status_code == 204, ended.text
    stack.http.cookies.clear()
    again = await stack.http.get("/api/v1/domains", headers={"Authorization": f"Bearer {token}"})
    assert again.status_code == 401, again.text


async def test_a_sign_in_this_browser_did_not_start_signs_nobody_in(stack: Stack) -> None:
    callback = await _to_callback(stack)
    other_state = {**dict(callback.params), "state": "not-the-state-it-sent"}
    refused = await stack.http.get(callback.path, params=other_state)
    assert refused.status_code == 400 and refused.json()["code"] == "sign-in-state-mismatch"
    assert "lorebase_session" not in refused.headers.get("set-cookie", "")
    stack.http.cookies.clear()  # a forged callback, in a browser that started nothing
    forged = await stack.http.get(callback.path, params=callback.params)
    assert forged.status_code == 400 and forged.json()["code"] == "sign-in-state-mismatch"
    unknown = await stack.http.get("/api/v1/web/oidc/elsewhere/start")
    assert unknown.status_code == 404


async def test_a_provider_error_and_bad_tokens_sign_nobody_in(
    stack: Stack, provider: tuple[str, str, str]
) -> None:
    issuer = provider[0]
    callback = await _to_callback(stack)
    denied = await stack.http.get(
        callback.path, params={"state": callback.params["state"], "error": "access_denied"}
    )
    assert denied.status_code == 401 and "access_denied" in denied.json()["detail"]
    for claims, says in (
        ({"iss": "http://127.0.0.1:9/untrusted"}, "issuer is not one Lorebase trusts"),
        ({"ttl": -120}, "expired"),
        ({"aud": "another-api"}, "audience"),
    ):
        await _misbehave(issuer, **claims)
        callback = await _to_callback(stack)
        refused = await stack.http.get(callback.path, params=callback.params)
        assert refused.status_code == 401, (claims, refused.text)
        assert says in refused.json()["detail"], refused.text
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "lorebase_session=" not in refused.headers.get("set-cookie", "")
        assert (await stack.http.get("/api/v1/web/session")).status_code == 401
