"""HTTP as browsers and stock clients expect it: a REST 401 says how to authenticate
(`WWW-Authenticate: Bearer`, RFC 6750), and CORS is off unless `http.cors.allow_origins` names the
origins of browser clients elsewhere; a Domain's `feed` settings are refused but for the one read
per Domain; reconciliation's list refuses limit=0 and a cursor it did not hand out."""

from __future__ import annotations

from lorebase_gateway.app import create_app

from tests.integration.conftest import Stack, open_stack

D = "/api/v1/domains/supply"


async def test_a_401_says_bearer(supply: Stack) -> None:
    for headers in ({}, {"Authorization": "Bearer lbk_nobody-has-this-key-0123456789"}):
        response = await supply.http.get(D + "/schema", headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer realm=")


async def test_cors_is_off_by_default_and_on_for_named_origins(database_url: str) -> None:
    preflight = {"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"}
    async with open_stack(database_url) as plain:
        answer = await plain.http.options(D + "/query", headers=preflight)
        assert "access-control-allow-origin" not in answer.headers
    allowed = '["https://app.example.com"]'
    async with open_stack(database_url, LOREBASE_HTTP__CORS__ALLOW_ORIGINS=allowed) as open_:
        answer = await open_.http.options(
            D + "/query", headers={**preflight, "Access-Control-Request-Headers": "authorization"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == "https://app.example.com"
        other = await open_.http.options(
            D + "/query", headers={**preflight, "Origin": "https://evil.example"}
        )
        assert other.headers.get("access-control-allow-origin") != "https://evil.example"
        got = await open_.http.get("/health", headers={"Origin": "https://app.example.com"})
        assert got.headers["access-control-allow-origin"] == "https://app.example.com"
    assert callable(create_app)  # the app the stacks serve


async def test_domain_feed_settings_other_than_changed_keys_max_are_refused(supply: Stack) -> None:
    for settings, status in (({"feed": {"max_scan": 10}}, 422), ({"feed": {"changed_keys_max": 10}}, 200)):
        answer = await supply.http.get(D, headers=supply.admin)
        assert answer.status_code == 200
        created = await supply.http.post(
            "/api/v1/domains",
            json={"name": f"feed{status}", "schema": {"kinds": {}}, "settings": settings},
            headers=supply.admin,
        )
        assert (created.status_code == 201) == (status == 200), created.text


async def test_reconciliation_list_refuses_limit_zero_and_unknown_cursors(supply: Stack) -> None:
    for query in ("limit=0", "cursor=rcn_never-handed-out"):
        answer = await supply.http.get(f"{D}/reconciliation?{query}", headers=supply.admin)
        assert answer.status_code == 400, (query, answer.text)
    assert (await supply.http.get(f"{D}/reconciliation?limit=5", headers=supply.admin)).status_code == 200
