"""Tags (issue 15 §3): immutable names of Revisions, accepted wherever at, since, from and to are."""

from __future__ import annotations

from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.test_history import raise_risk, revisions

D = "/api/v1/domains/supply"
TAGS = D + "/tags"
S1001 = D + "/kinds/Supplier/records/S-1001"


async def tag(stack: Stack, name: str, revision: str, headers: dict[str, str] | None = None) -> dict:
    response = await stack.http.post(
        TAGS, json={"name": name, "revision": revision}, headers=headers or stack.admin
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_create_list_get_delete_and_audit(supply: Stack) -> None:
    first, second = (await revisions(supply))[:2]
    created = await tag(supply, "release/2026.10", first)
    assert created["name"] == "release/2026.10" and created["revision"] == first
    assert created["branch"] == "main" and created["created_by"] == "usr_admin"
    await tag(supply, "v2", second[:12])  # a unique prefix names the Revision
    await tag(supply, "v3", second)  # two tags may name one Revision
    listed = (await supply.http.get(TAGS, headers=supply.admin)).json()
    assert [t["name"] for t in listed["tags"]] == ["v3", "v2", "release/2026.10"]  # newest first
    assert listed["next_cursor"] is None
    page = (await supply.http.get(TAGS + "?limit=2", headers=supply.admin)).json()
    assert [t["name"] for t in page["tags"]] == ["v3", "v2"]
    rest = (await supply.http.get(TAGS, params={"cursor": page["next_cursor"]}, headers=supply.admin)).json()
    assert [t["name"] for t in rest["tags"]] == ["release/2026.10"] and rest["next_cursor"] is None
    got = await supply.http.get(TAGS + "/release/2026.10", headers=supply.admin)
    assert got.status_code == 200 and got.json() == created
    assert got.headers["Lorebase-Revision"] == first
    again = await supply.http.post(TAGS, json={"name": "v2", "revision": first}, headers=supply.admin)
    assert again.status_code == 409 and again.json()["type"].endswith("/already-exists")
    assert (await supply.http.get(TAGS + "/v2", headers=supply.admin)).json()["revision"] == second  # unmoved
    deleted = await supply.http.delete(TAGS + "/v2", headers=supply.admin)
    assert deleted.status_code == 204 and deleted.content == b""
    assert (await supply.http.get(TAGS + "/v2", headers=supply.admin)).status_code == 404
    assert (await supply.http.delete(TAGS + "/v2", headers=supply.admin)).status_code == 404
    async with supply.rt.db.engine.connect() as conn:
        actions = (
            await conn.execute(
                text("select action, target from audit_log where action like 'tag.%' order by id")
            )
        ).all()
    assert [tuple(a) for a in actions] == [
        ("tag.create", "release/2026.10"),
        ("tag.create", "v2"),
        ("tag.create", "v3"),
        ("tag.delete", "v2"),
    ]


async def test_bad_names_revisions_and_permissions(supply: Stack) -> None:
    first = (await revisions(supply))[0]
    for name in ("", "-x", "a..b", "a/", "x.lock", "a b", "a/.b", "x" * 201):
        response = await supply.http.post(TAGS, json={"name": name, "revision": first}, headers=supply.admin)
        assert response.status_code == 422, (name, response.text)
        assert response.json()["issues"][0]["path"] == "name"
    for revision in ("zz", "abc", "f" * 65, ""):
        response = await supply.http.post(
            TAGS, json={"name": "ok", "revision": revision}, headers=supply.admin
        )
        assert response.status_code == 422, (revision, response.text)
    unknown = await supply.http.post(TAGS, json={"name": "ok", "revision": "f" * 64}, headers=supply.admin)
    assert unknown.status_code == 404 and unknown.json()["type"].endswith("/revision-not-found")
    assert "tag a Revision the Domain has" in unknown.json()["detail"]
    assert (await supply.http.get(TAGS + "/nope", headers=supply.admin)).status_code == 404
    # The editor role may tag, not delete; a viewer may only read; an outsider sees no Domain.
    editor = await supply.principal("usr_editor")
    await tag(supply, "by-editor", first, headers=editor)
    refused = await supply.http.delete(TAGS + "/by-editor", headers=editor)
    assert refused.status_code == 403 and refused.json()["permission"] == "tag.delete"
    viewer = await supply.principal("usr_tagviewer")
    await supply.grant("supply", "usr_tagviewer", "viewer")
    refused = await supply.http.post(TAGS, json={"name": "v", "revision": first}, headers=viewer)
    assert refused.status_code == 403 and refused.json()["permission"] == "tag.create"
    assert (await supply.http.get(TAGS + "/by-editor", headers=viewer)).status_code == 200
    # A tag of a Revision on a branch the caller may not read is invisible to it.
    await supply.http.post(D + "/branches", json={"name": "hidden"}, headers=supply.admin)
    hidden = await raise_risk_on(supply, "hidden")
    await tag(supply, "on-hidden", hidden)
    narrow = await supply.principal("usr_mainonly")
    await supply.grant("supply", "usr_mainonly", "viewer", branches=["main"])
    assert "on-hidden" not in [
        t["name"] for t in (await supply.http.get(TAGS, headers=narrow)).json()["tags"]
    ]
    assert (await supply.http.get(TAGS + "/on-hidden", headers=narrow)).status_code == 404
    outsider = await supply.principal("usr_nobody")
    assert (await supply.http.get(TAGS, headers=outsider)).status_code == 404


async def raise_risk_on(stack: Stack, branch: str) -> str:
    response = await stack.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1001", "risk_score": 11}, "branch": branch, "message": "on " + branch},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["revision"])


async def test_reading_at_a_tag_is_reading_at_its_revision(supply: Stack) -> None:
    first, second = (await revisions(supply))[:2]
    await raise_risk(supply, "S-1001", 95, "Third look")
    await tag(supply, "imported", first)
    await tag(supply, "edited", second)
    for path in (
        S1001 + "?links=true&lineage=true&at={}",
        S1001 + "/history?values=true&at={}",
        S1001 + "/lineage?at={}",
        S1001 + "/explain?at={}",
        S1001 + "/explain?format=markdown&at={}",
        S1001 + "/links/supplies?at={}",
        D + "/health?at={}",
        D + "/kinds/Supplier/health?at={}",
    ):
        by_tag = await supply.http.get(path.format("imported"), headers=supply.admin)
        by_id = await supply.http.get(path.format(first), headers=supply.admin)
        assert by_tag.status_code == 200, (path, by_tag.text)
        assert by_tag.content == by_id.content, path
        assert by_tag.headers["Lorebase-Revision"] == first
    for body in (
        {
            "kind": "Supplier",
            "where": {"attr": "country", "op": "eq", "value": "PL"},
            "select": ["risk_score"],
        },
        {"kind": "Supplier", "aggregate": {"count": True}},
    ):
        by_tag = await supply.http.post(D + "/query", json={**body, "at": "edited"}, headers=supply.admin)
        by_id = await supply.http.post(D + "/query", json={**body, "at": second}, headers=supply.admin)
        assert by_tag.status_code == 200, by_tag.text
        assert by_tag.content == by_id.content
    by_tag = await supply.http.get(
        D + "/diff", params={"from": "imported", "to": "edited"}, headers=supply.admin
    )
    by_id = await supply.http.get(D + "/diff", params={"from": first, "to": second}, headers=supply.admin)
    assert by_tag.status_code == 200 and by_tag.content == by_id.content
    context = {"refs": ["Supplier/S-1001"], "include_recent_changes": True}
    by_tag = await supply.http.post(
        D + "/context", json={**context, "since": "imported"}, headers=supply.admin
    )
    by_id = await supply.http.post(D + "/context", json={**context, "since": first}, headers=supply.admin)
    assert by_tag.status_code == 200
    # The pack's etag digests the request as sent; everything else is the same.
    assert {**by_tag.json(), "etag": ""} == {**by_id.json(), "etag": ""}
    assert by_tag.json()["recent_changes"]
    # Deleted: the name answers like an unknown Revision.
    assert (await supply.http.delete(TAGS + "/imported", headers=supply.admin)).status_code == 204
    gone = await supply.http.get(S1001 + "?at=imported", headers=supply.admin)
    assert gone.status_code == 404 and gone.json()["type"].endswith("/revision-not-found")
    unknown = await supply.http.get(S1001 + "?at=" + "0" * 64, headers=supply.admin)
    assert unknown.status_code == gone.status_code and unknown.json()["type"] == gone.json()["type"]
    gone = await supply.http.get(
        D + "/diff", params={"from": "imported", "to": "edited"}, headers=supply.admin
    )
    assert gone.status_code == 404


async def test_a_tag_off_the_branch_says_which_branch(supply: Stack) -> None:
    await supply.http.post(D + "/branches", json={"name": "team/w"}, headers=supply.admin)
    on_branch = await raise_risk_on(supply, "team/w")
    await tag(supply, "team-work", on_branch)
    off = await supply.http.get(S1001 + "?at=team-work", headers=supply.admin)
    assert off.status_code == 404 and "branch='team/w'" in off.json()["detail"]
    assert (
        await supply.http.get(S1001 + "?at=team-work&branch=team/w", headers=supply.admin)
    ).status_code == 200
