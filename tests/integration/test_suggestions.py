"""Scribe's suggestions from resolve misses, and their review over REST."""

from __future__ import annotations

from lorebase_scribe.suggestions import suggest
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.test_resolve import retail

S = "/api/v1/domains/retail/suggestions"


async def miss(stack: Stack, words: str, times: int, **body: object) -> None:
    for _ in range(times):
        response = await stack.http.post(
            "/api/v1/domains/retail/resolve", json={"text": words, **body}, headers=stack.admin
        )
        assert response.status_code == 200, response.text


async def test_frequent_misses_become_suggestions_a_person_reviews(stack: Stack) -> None:
    await retail(stack)
    # "colr" is a miss (too short for a guessed edit, too far in trigrams), yet near color
    await miss(stack, "colr bluish xyzzy", 3)
    await miss(stack, "acmecorp", 2)
    assert await suggest(stack.rt.db, stack.rt.settings) == 3
    listed = await stack.http.get(S, headers=stack.admin)
    assert listed.status_code == 200, listed.text
    found = {s["phrase"]: s for s in listed.json()["suggestions"]}
    assert set(found) == {"colr", "bluish", "xyzzy"}, "acmecorp was missed twice only (suggest_min_count 3)"
    assert found["colr"]["type"] == "alias"
    assert found["colr"]["target"] == {"kind": "Product", "attribute": "color"}
    assert found["colr"]["patch"] == {
        "op": "add",
        "path": "kinds.Product.attributes.color.aliases",
        "value": "colr",
    }
    assert found["bluish"]["type"] == "value_alias"
    assert found["bluish"]["target"] == {"kind": "Product", "attribute": "color", "value": "blue"}
    assert found["xyzzy"]["type"] == "description" and found["xyzzy"]["status"] == "open"
    assert found["colr"]["misses"] == 3

    accepted = await stack.http.post(f"{S}/{found['colr']['id']}/accept", headers=stack.admin)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["suggestion"]["status"] == "accepted"
    assert accepted.json()["schema_patch"] == found["colr"]["patch"]
    schema = (await stack.http.get("/api/v1/domains/retail/schema", headers=stack.admin)).json()
    color = schema["kinds"][0]["attributes"]["color"]
    assert "colr" not in (color.get("aliases") or []), "accepting changes nothing in the schema"
    dismissed = await stack.http.post(f"{S}/{found['xyzzy']['id']}/dismiss", headers=stack.admin)
    assert dismissed.status_code == 200 and dismissed.json()["suggestion"]["status"] == "dismissed"
    again = await stack.http.post(f"{S}/{found['xyzzy']['id']}/accept", headers=stack.admin)
    assert again.status_code == 409, again.text
    unknown = await stack.http.post(f"{S}/sug_nope/dismiss", headers=stack.admin)
    assert unknown.status_code == 404

    # A second pass leaves decided suggestions alone; listing takes a status.
    await miss(stack, "xyzzy", 1)
    await suggest(stack.rt.db, stack.rt.settings)
    still = (await stack.http.get(f"{S}?status=dismissed", headers=stack.admin)).json()["suggestions"]
    assert [s["phrase"] for s in still] == ["xyzzy"]
    assert [s["phrase"] for s in (await stack.http.get(S, headers=stack.admin)).json()["suggestions"]] == [
        "bluish"
    ]
    assert (await stack.http.get(f"{S}?status=maybe", headers=stack.admin)).status_code == 400

    # Reviewing needs domain.settings.
    viewer = await stack.principal("usr_viewer")
    await stack.grant("retail", "usr_viewer", "viewer")
    assert (await stack.http.get(S, headers=viewer)).status_code == 403


async def test_old_misses_are_forgotten_and_some_reads_record_nothing(stack: Stack) -> None:
    await retail(stack)
    await miss(stack, "zzqq", 3, record_misses=False)
    head = (await stack.http.get("/api/v1/domains/retail/branches/main", headers=stack.admin)).json()
    await miss(stack, "zzqq", 3, at=head["head"])
    assert await stack.count("resolve_misses") == 0, "record_misses false and at reads keep nothing"
    await miss(stack, "wwvv", 3)
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("update resolve_misses set last_seen = now() - interval '31 days'"))
    assert await suggest(stack.rt.db, stack.rt.settings) == 0
    assert await stack.count("resolve_misses") == 0, "agents.resolve.miss_retention_days is 30"
    assert await stack.count("suggestions") == 0
