"""Principals, keys as digests, grants with roles and branch patterns, and the audit log."""

from __future__ import annotations

from sqlalchemy import text

from tests.integration.conftest import ADMIN_KEY, Stack

DOMAIN = "/api/v1/domains/supply"


async def test_keys_are_stored_only_as_digests(supply: Stack) -> None:
    response = await supply.http.post("/api/v1/principals/usr_editor/keys", headers=supply.admin)
    key = response.json()["key"]
    async with supply.rt.db.engine.connect() as conn:
        dump = " ".join(str(row) for row in await conn.execute(text("select * from api_keys")))
    assert key not in dump and ADMIN_KEY not in dump


async def test_revoked_key_is_refused(supply: Stack) -> None:
    created = (await supply.http.post("/api/v1/principals/usr_editor/keys", headers=supply.admin)).json()
    headers = {"Authorization": f"Bearer {created['key']}"}
    assert (await supply.http.get(f"{DOMAIN}/schema", headers=headers)).status_code == 200
    revoked = await supply.http.delete(
        f"/api/v1/principals/usr_editor/keys/{created['id']}", headers=supply.admin
    )
    assert revoked.status_code == 200
    refused = await supply.http.get(f"{DOMAIN}/schema", headers=headers)
    assert refused.status_code == 401
    assert refused.headers["content-type"] == "application/problem+json"


async def test_missing_and_wrong_credentials_are_401(supply: Stack) -> None:
    assert (await supply.http.get(f"{DOMAIN}/schema")).status_code == 401
    assert (
        await supply.http.get(f"{DOMAIN}/schema", headers={"Authorization": "Bearer nope"})
    ).status_code == 401
    assert (
        await supply.http.get(f"{DOMAIN}/schema", headers={"Authorization": "Basic abc"})
    ).status_code == 401


async def test_only_admin_creates_principals_and_domain_settings_creates_grants(supply: Stack) -> None:
    editor = await supply.principal("usr_someone")
    await supply.grant("supply", "usr_someone", "editor")
    denied = await supply.http.post(
        "/api/v1/principals", json={"id": "usr_x", "type": "user"}, headers=editor
    )
    assert denied.status_code == 403
    denied = await supply.http.post(
        f"{DOMAIN}/grants", json={"principal": "usr_someone", "role": "admin"}, headers=editor
    )
    assert denied.status_code == 403
    # usr_loader holds the admin role in the Domain: domain.settings lets it grant
    loader_key = (await supply.http.post("/api/v1/principals/usr_loader/keys", headers=supply.admin)).json()[
        "key"
    ]
    granted = await supply.http.post(
        f"{DOMAIN}/grants",
        json={"principal": "usr_someone", "role": "reviewer"},
        headers={"Authorization": f"Bearer {loader_key}"},
    )
    assert granted.status_code == 201


async def test_branch_patterns_limit_grants(supply: Stack) -> None:
    agent = await supply.principal("agt_worker", type="service")
    await supply.grant("supply", "agt_worker", "editor", branches=["agent/*"])
    created = await supply.http.post(
        f"{DOMAIN}/branches", json={"name": "agent/agt_worker/t1", "from": "main"}, headers=supply.admin
    )
    assert created.status_code == 201
    ok = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?branch=agent/agt_worker/t1", headers=agent
    )
    assert ok.status_code == 200
    forbidden = await supply.http.get(f"{DOMAIN}/kinds/Supplier/records/S-1001", headers=agent)
    assert forbidden.status_code == 403
    written = await supply.http.post(
        f"{DOMAIN}/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1001", "risk_score": 70}, "branch": "agent/agt_worker/t1"},
        headers=agent,
    )
    assert written.status_code == 200, written.text


async def test_grant_withdrawn_takes_effect(supply: Stack) -> None:
    viewer = await supply.principal("usr_temp")
    grant = await supply.grant("supply", "usr_temp", "viewer")
    assert (await supply.http.get(f"{DOMAIN}/schema", headers=viewer)).status_code == 200
    deleted = await supply.http.delete(f"{DOMAIN}/grants/{grant}", headers=supply.admin)
    assert deleted.status_code == 200
    assert (await supply.http.get(f"{DOMAIN}/schema", headers=viewer)).status_code == 404


async def test_every_write_and_admin_action_is_audited(supply: Stack) -> None:
    async with supply.rt.db.engine.connect() as conn:
        actions = [row[0] for row in await conn.execute(text("select action from audit_log order by id"))]
    assert actions.count("principal.create") == 2
    assert actions.count("key.create") == 2
    assert "domain.create" in actions and actions.count("grant.create") == 2
    assert actions[-2:] == ["import", "operation.invoke"]


async def test_grant_validation(supply: Stack) -> None:
    response = await supply.http.post(
        f"{DOMAIN}/grants",
        json={"principal": "usr_editor", "role": "owner", "kinds": ["Gizmo"], "extra": 1},
        headers=supply.admin,
    )
    assert response.status_code == 422
    paths = {i["path"] for i in response.json()["issues"]}
    assert {"role", "extra"} == paths  # the types first, at the edge, every member at once
    response = await supply.http.post(
        f"{DOMAIN}/grants",
        json={"principal": "usr_editor", "role": "viewer", "kinds": ["Gizmo"]},
        headers=supply.admin,
    )
    assert response.status_code == 422
    assert {i["path"] for i in response.json()["issues"]} == {"kinds[0]"}


async def test_rate_limits_answer_429_with_retry_after(supply: Stack) -> None:
    from lorebase.rate_limits import Limit, RateLimiter

    editor = await supply.principal("usr_busy")
    await supply.grant("supply", "usr_busy", "editor")
    # The stack's keeper shares this Runtime; its limiter is swapped for a tight one.
    object.__setattr__(supply.rt, "limits", RateLimiter({"reads": Limit(0.01, 2), "writes": Limit(0.01, 1)}))
    url = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"
    for _ in range(2):
        assert (await supply.http.get(url, headers=editor)).status_code == 200
    refused = await supply.http.get(url, headers=editor)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "rate-limited" and refused.json()["rate_class"] == "reads"
    assert int(refused.headers["Retry-After"]) >= 1
    assert (await supply.http.get(url, headers=supply.admin)).status_code == 200  # admin is not limited
    body = {"parameters": {"key": "S-1001", "risk_score": 7}}
    execute = "/api/v1/domains/supply/operations/update_supplier/execute"
    assert (await supply.http.post(execute, json=body, headers=editor)).status_code == 200
    assert (await supply.http.post(execute, json=body, headers=editor)).status_code == 429
