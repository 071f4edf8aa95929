"""The gateway's cache of repeated reads (lorebase_gateway.read_cache): a plain read never comes from
it, and a read that opted into bounded staleness is never older than what it allows, never older than
a Revision it names, and never another credential's answer."""

from __future__ import annotations

import asyncio

import pytest
from lorebase_gateway.read_cache import ReadCache

from tests.integration.conftest import Stack, open_stack, raise_risk

RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"
STALE = {"Cache-Control": "max-stale=60"}


def _cache(stack: Stack) -> ReadCache:
    assert stack.gateway.read_cache is not None
    return stack.gateway.read_cache


async def test_a_read_that_opts_in_is_answered_again_without_keeper(supply: Stack) -> None:
    cache = _cache(supply)
    first = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    assert first.status_code == 200 and first.headers["Lorebase-Cache"] == "miss"
    hits = cache.hits
    again = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    assert again.status_code == 200 and again.headers["Lorebase-Cache"] == "hit"
    assert cache.hits == hits + 1
    assert again.content == first.content
    assert again.headers["Lorebase-Revision"] == first.headers["Lorebase-Revision"]
    assert again.headers["ETag"] == first.headers["ETag"]
    assert again.headers["Content-Type"] == first.headers["Content-Type"]
    assert int(again.headers["Age"]) >= 0 and "X-Request-Id" in again.headers
    # The ETag of a hit answers If-None-Match like keeper's answer does.
    unchanged = await supply.http.get(
        RECORD, headers={**supply.admin, **STALE, "If-None-Match": first.headers["ETag"]}
    )
    assert unchanged.status_code == 304 and unchanged.headers["Lorebase-Cache"] == "hit"


async def test_a_plain_read_is_never_served_from_the_cache(supply: Stack) -> None:
    cache = _cache(supply)
    await supply.http.get(RECORD, headers={**supply.admin, **STALE})  # an entry for this request
    revision = await raise_risk(supply, 55)
    hits = cache.hits
    plain = await supply.http.get(RECORD, headers=supply.admin)
    assert plain.json()["values"]["risk_score"] == "55" and plain.json()["revision"] == revision
    assert "Lorebase-Cache" not in plain.headers and cache.hits == hits
    # no-cache asks for a fresh answer, max-stale or not.
    fresh = await supply.http.get(RECORD, headers={**supply.admin, "Cache-Control": "max-stale=60, no-cache"})
    assert fresh.json()["revision"] == revision and "Lorebase-Cache" not in fresh.headers


async def test_a_read_naming_its_own_write_sees_it_even_with_an_older_entry(supply: Stack) -> None:
    cache = _cache(supply)
    before = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    assert (await supply.http.get(RECORD, headers={**supply.admin, **STALE})).headers[
        "Lorebase-Cache"
    ] == "hit"
    revision = await raise_risk(supply, 44)
    # Without naming it, the older entry is within what the client allows: bounded staleness.
    stale = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    assert stale.headers["Lorebase-Cache"] == "hit" and stale.content == before.content
    seen = {**supply.admin, **STALE, "Lorebase-Min-Revision": revision}
    after = await supply.http.get(RECORD, headers=seen)
    assert after.headers["Lorebase-Cache"] == "miss"
    assert after.json()["values"]["risk_score"] == "44" and after.json()["revision"] == revision
    # The fresh answer replaced the entry: the next read naming that Revision is a hit, and so is
    # one naming nothing, and one naming the older Revision (keeper said where both stand).
    hits = cache.hits
    assert (await supply.http.get(RECORD, headers=seen)).headers["Lorebase-Cache"] == "hit"
    latest = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    assert latest.json()["revision"] == revision
    older = {**supply.admin, **STALE, "Lorebase-Min-Revision": before.headers["Lorebase-Revision"]}
    assert (await supply.http.get(RECORD, headers=older)).json()["revision"] == revision
    assert cache.hits == hits + 3
    assert "lorebase-read-order" not in latest.headers and "lorebase-read-order" not in after.headers


async def test_a_client_naming_its_write_is_served_later_heads_once_their_order_is_known(
    supply: Stack,
) -> None:
    cache = _cache(supply)
    mine = await raise_risk(supply, 61)
    theirs = await raise_risk(supply, 62)  # another writer moves the head on before the read
    seen = {**supply.admin, **STALE, "Lorebase-Min-Revision": mine}
    first = await supply.http.get(RECORD, headers=seen)
    assert first.headers["Lorebase-Cache"] == "miss" and first.json()["revision"] == theirs
    # Keeper answered the head after the client had seen `mine`: `mine` is no later than that head,
    # so the entry (or any later head of the branch) now answers it.
    again = await supply.http.get(RECORD, headers=seen)
    assert again.headers["Lorebase-Cache"] == "hit" and again.json()["values"]["risk_score"] == "62"
    newest = await raise_risk(supply, 63)
    fresh = await supply.http.get(RECORD, headers={**supply.admin, **STALE, "Lorebase-Min-Revision": newest})
    assert fresh.headers["Lorebase-Cache"] == "miss" and fresh.json()["revision"] == newest
    hits = cache.hits
    later = await supply.http.get(RECORD, headers=seen)
    assert later.headers["Lorebase-Cache"] == "hit" and later.json()["revision"] == newest
    assert cache.hits == hits + 1


async def test_two_credentials_never_share_an_entry(supply: Stack) -> None:
    narrowed = await supply.principal("usr_buyer")
    await supply.grant("supply", "usr_buyer", "viewer", kinds=["Supplier"])
    for _ in range(2):  # the second round reads what the first one left in the cache
        admin = await supply.http.get(RECORD, headers={**supply.admin, **STALE})
        assert admin.json()["values"]["vat_number"] and "redacted" not in admin.json()
        buyer = await supply.http.get(RECORD, headers={**narrowed, **STALE})
        assert "vat_number" not in buyer.json()["values"] and buyer.json()["redacted"] == ["vat_number"]
    assert buyer.headers["Lorebase-Cache"] == "hit" and admin.headers["Lorebase-Cache"] == "hit"
    # The same grants under another credential: its own entry all the same.
    other = await supply.principal("usr_other")
    await supply.grant("supply", "usr_other", "viewer", kinds=["Supplier"])
    assert (await supply.http.get(RECORD, headers={**other, **STALE})).headers["Lorebase-Cache"] == "miss"


async def test_an_entry_is_never_older_than_max_stale(supply: Stack) -> None:
    cache = _cache(supply)
    await supply.http.get(RECORD, headers={**supply.admin, **STALE})
    (entry,) = cache._entries.values()
    entry.made -= 3  # as if it were made three seconds ago (its lifetime is left as it was)
    assert (await supply.http.get(RECORD, headers={**supply.admin, "Cache-Control": "max-stale=2"})).headers[
        "Lorebase-Cache"
    ] == "miss"
    (entry,) = cache._entries.values()  # the fresh answer replaced it
    entry.made -= 3
    aged = await supply.http.get(RECORD, headers={**supply.admin, "Cache-Control": "max-stale=10"})
    assert aged.headers["Lorebase-Cache"] == "hit" and int(aged.headers["Age"]) >= 3
    # max-stale=0 allows no age at all: an answer is older than that as soon as it is made.
    assert (await supply.http.get(RECORD, headers={**supply.admin, "Cache-Control": "max-stale=0"})).headers[
        "Lorebase-Cache"
    ] == "miss"
    # Past its lifetime (max_stale_s, grants_cache_ttl_s), an entry is not served whatever is asked.
    (entry,) = cache._entries.values()
    entry.until = entry.made
    assert (await supply.http.get(RECORD, headers={**supply.admin, **STALE})).headers[
        "Lorebase-Cache"
    ] == "miss"


async def test_a_key_revoked_through_this_gateway_stops_its_hits_at_once(supply: Stack) -> None:
    created = (await supply.http.post("/api/v1/principals/usr_editor/keys", headers=supply.admin)).json()
    editor = {"Authorization": f"Bearer {created['key']}", **STALE}
    assert (await supply.http.get(RECORD, headers=editor)).status_code == 200
    assert (await supply.http.get(RECORD, headers=editor)).headers["Lorebase-Cache"] == "hit"
    revoked = await supply.http.delete(
        f"/api/v1/principals/usr_editor/keys/{created['id']}", headers=supply.admin
    )
    assert revoked.status_code == 200, revoked.text
    refused = await supply.http.get(RECORD, headers=editor)
    assert refused.status_code == 401 and "Lorebase-Cache" not in refused.headers


async def test_a_key_revoked_elsewhere_stops_its_hits_within_the_grants_cache_time(
    supply: Stack, database_url: str
) -> None:
    async with open_stack(database_url, LOREBASE_KEEPER__AUTH__AUTHZ__GRANTS_CACHE_TTL_S="0.5") as short:
        created = (await short.http.post("/api/v1/principals/usr_editor/keys", headers=short.admin)).json()
        editor = {"Authorization": f"Bearer {created['key']}", **STALE}
        assert (await short.http.get(RECORD, headers=editor)).status_code == 200
        assert _cache(short).lifetime_s == 0.5
        # Revoked through the other gateway and keeper: this one's entry lives no longer than its
        # keeper caches the credential.
        path = f"/api/v1/principals/usr_editor/keys/{created['id']}"
        assert (await supply.http.delete(path, headers=supply.admin)).status_code == 200
        await asyncio.sleep(0.6)
        assert (await short.http.get(RECORD, headers=editor)).status_code == 401


async def test_a_read_in_a_session_always_goes_to_keeper(supply: Stack) -> None:
    traced = {**supply.admin, **STALE, "Lorebase-Session": "ses_cache_test"}
    for _ in range(2):  # each call is a step of the session's trace, so none is answered here
        response = await supply.http.get(RECORD, headers=traced)
        assert response.status_code == 200 and response.headers["Lorebase-Cache"] == "miss"


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("Cache-Control", "max-stale=abc", "max-stale takes whole seconds"),
        ("Cache-Control", "max-stale=-1", "max-stale takes whole seconds"),
        ("Cache-Control", "max-stale=", "max-stale takes whole seconds"),
        ("Lorebase-Min-Revision", "abc", "Lorebase-Min-Revision is a full Revision id"),
        ("Lorebase-Min-Revision", "A" * 64, "Lorebase-Min-Revision is a full Revision id"),
    ],
)
async def test_bad_cache_headers_are_refused_saying_what_to_change(
    supply: Stack, name: str, value: str, says: str
) -> None:
    await supply.http.get(RECORD, headers={**supply.admin, **STALE})  # an entry the request would find
    response = await supply.http.get(RECORD, headers={**supply.admin, **STALE, name: value})
    assert response.status_code == 400, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert says in response.json()["detail"]


async def test_a_larger_max_stale_is_cut_to_the_setting_and_a_disabled_cache_keeps_nothing(
    database_url: str,
) -> None:
    async with open_stack(
        database_url, LOREBASE_HTTP__READ_CACHE__ENABLED="false", LOREBASE_HTTP__READ_CACHE__MAX_STALE_S="7"
    ) as stack:
        await stack.supply()
        cache = _cache(stack)
        for _ in range(2):
            response = await stack.http.get(
                RECORD, headers={**stack.admin, "Cache-Control": "max-stale=99999"}
            )
            assert response.headers["Lorebase-Cache"] == "miss"
        assert len(cache) == 0 and cache.hits == 0
        ask = cache.read(
            {
                "headers": [(b"cache-control", b"max-stale=99999"), (b"authorization", b"x")],
                "path": "/",
                "query_string": b"",
            },
            strict=True,
        ).ask
        assert ask is not None and ask.max_stale_s == 7
