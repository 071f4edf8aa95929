"""The keeper's cache of repeated reads (lorebase_keeper.read_cache): a hit is only ever the answer
reading the rows would give now, for the caller's grants."""

from __future__ import annotations

import asyncio

from tests.integration.conftest import Stack, open_stack, raise_risk

RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001?links=true"


async def test_a_repeated_read_is_served_from_the_cache_until_the_head_moves(supply: Stack) -> None:
    first = await supply.http.get(RECORD, headers=supply.admin)
    hits = supply.rt.read_cache.hits
    again = await supply.http.get(RECORD, headers=supply.admin)
    assert supply.rt.read_cache.hits == hits + 1
    assert again.content == first.content
    revision = await raise_risk(supply, 55)
    after = await supply.http.get(RECORD, headers=supply.admin)
    assert after.json()["values"]["risk_score"] == "55"
    assert after.json()["revision"] == revision == after.headers["Lorebase-Revision"]


async def test_a_read_through_another_keeper_sees_a_write_made_through_this_one(
    supply: Stack, database_url: str
) -> None:
    async with open_stack(database_url) as other:
        before = await other.http.get(RECORD, headers=other.admin)
        assert (await other.http.get(RECORD, headers=other.admin)).content == before.content  # cached
        revision = await raise_risk(supply, 44)
        after = await other.http.get(RECORD, headers=other.admin)
        assert after.json()["values"]["risk_score"] == "44"
        assert after.json()["revision"] == revision


async def test_callers_with_different_grants_never_share_an_answer(supply: Stack) -> None:
    narrowed = await supply.principal("usr_buyer")
    await supply.grant("supply", "usr_buyer", "viewer", kinds=["Supplier"])
    viewer = await supply.principal("usr_viewer")
    await supply.grant("supply", "usr_viewer", "viewer")
    for _ in range(2):  # the second round reads what the first one left in the cache
        admin = (await supply.http.get(RECORD, headers=supply.admin)).json()
        assert admin["values"]["vat_number"] and "redacted" not in admin
        assert admin["links"] == {"supplies": 1, "contracts": 1, "risk_flags": 0}
        buyer = (await supply.http.get(RECORD, headers=narrowed)).json()
        assert "vat_number" not in buyer["values"] and buyer["redacted"] == ["vat_number"]
        assert buyer["links"] == {}
        plain = (await supply.http.get(RECORD, headers=viewer)).json()
        assert "vat_number" not in plain["values"] and plain["redacted"] == ["vat_number"]
        assert plain["links"] == admin["links"]
    # Two callers whose grants allow the same share the entry: it describes what the grants allow.
    twin = await supply.principal("usr_viewer_2")
    await supply.grant("supply", "usr_viewer_2", "viewer")
    hits = supply.rt.read_cache.hits
    assert (await supply.http.get(RECORD, headers=twin)).json() == plain
    assert supply.rt.read_cache.hits == hits + 1


async def test_a_revoked_grant_stops_cache_hits_within_the_grants_cache_time(
    supply: Stack, database_url: str
) -> None:
    async with open_stack(database_url, LOREBASE_KEEPER__AUTH__AUTHZ__GRANTS_CACHE_TTL_S="0.5") as short:
        viewer = await short.principal("usr_viewer")
        grant = await short.grant("supply", "usr_viewer", "viewer")
        assert (await short.http.get(RECORD, headers=viewer)).status_code == 200
        assert (await short.http.get(RECORD, headers=viewer)).status_code == 200
        # Revoked through the other keeper: this one learns it only when its cached grants expire.
        revoked = await supply.http.delete(f"/api/v1/domains/supply/grants/{grant}", headers=supply.admin)
        assert revoked.status_code in (200, 204), revoked.text
        await asyncio.sleep(0.6)
        assert (await short.http.get(RECORD, headers=viewer)).status_code == 404


async def test_no_cache_answers_the_same(database_url: str) -> None:
    async with open_stack(database_url, LOREBASE_KEEPER__READ_CACHE__MAX_ENTRIES="0") as stack:
        await stack.supply()
        first = await stack.http.get(RECORD, headers=stack.admin)
        assert (await stack.http.get(RECORD, headers=stack.admin)).content == first.content
        assert stack.rt.read_cache.hits == 0 and len(stack.rt.read_cache) == 0
