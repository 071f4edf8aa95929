"""What the second black-box probe found besides the three authorization holes (issue 24, items 4 to
10), each as the probe made it: a body read for a made-up key, a valid key locked out by the
per-address limit, a vector beyond single precision, an erased value surviving as a word of what a
caller typed, an unvalidated cursor, answers without CSP or nosniff, the operator RPCs answering
without a credential, and the store's restart answered as a 500."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from lorebase.problems import Problem, StoreUnavailable
from lorebase_store import Database
from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.feed_stack import Feed, running_feed
from tests.integration.test_erasure import D as CRM
from tests.integration.test_erasure import crm  # noqa: F401 (the fixture)

D = "/api/v1/domains/supply"
BAD = {"Authorization": "Bearer lbk_made_up_by_the_probe"}


async def test_the_body_of_an_unknown_key_is_never_read(supply: Stack) -> None:
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(4096):  # 256 MiB, were it read
            sent += 65536
            yield b" " * 65536

    response = await supply.http.post(
        D + "/imports", content=body(), headers={**BAD, "Content-Type": "application/json"}
    )
    assert response.status_code == 401, response.text
    assert sent <= 2 * 65536, f"{sent} bytes were read for a key that authenticates nobody"
    declared = await supply.http.post(
        D + "/imports",
        content=b"{}",
        headers={**BAD, "Content-Type": "application/json", "Content-Length": "100000000"},
    )
    assert declared.status_code == 401
    # A known key's large body is read (and checked) as before.
    known = await supply.http.post(
        D + "/imports", json={"records": [], "padding": "x" * 20000}, headers=supply.admin
    )
    assert known.status_code == 422, known.text


async def test_a_valid_key_is_not_locked_out_and_health_never_refused(supply: Stack) -> None:
    viewer = await supply.principal("usr_flooded")
    await supply.grant("supply", "usr_flooded", "viewer")
    record = D + "/kinds/Supplier/records/S-1001"
    assert (await supply.http.get(record, headers=viewer)).status_code == 200
    # An API key where a web session is needed: 401, but the key still authenticates.
    assert (await supply.http.get("/api/v1/web/session", headers=viewer)).status_code == 401
    for _ in range(80):  # the address spends its allowance of bad keys (burst 50)
        await supply.http.get(record, headers=BAD)
    assert (await supply.http.get(record, headers=BAD)).status_code == 429
    assert (await supply.http.get(record, headers=viewer)).status_code == 200
    assert (await supply.http.get("/health")).status_code == 200


async def test_vector_components_beyond_single_precision_are_refused(supply: Stack) -> None:
    embedding = await supply.http.put(
        D + "/kinds/Supplier/records/S-1001/embedding",
        json={"vector": [1e39, 1.0], "model": "m"},
        headers=supply.admin,
    )
    assert embedding.status_code == 422, embedding.text
    search = await supply.http.post(D + "/search", json={"query_vector": [-1e300]}, headers=supply.admin)
    assert search.status_code == 422, search.text


async def test_an_erased_value_leaves_no_word_in_what_callers_typed(crm: Stack) -> None:  # noqa: F811
    local_part = "erase-me-7391"
    made = await crm.http.post(
        CRM + "/imports",
        json={
            "records": [
                {
                    "kind": "Customer",
                    "values": {"id": "C-9", "name": "Eve", "email": f"{local_part}@example.org"},
                }
            ]
        },
        headers=crm.admin,
    )
    assert made.status_code == 200, made.text
    resolved = await crm.http.post(
        CRM + "/resolve", json={"text": f"customer {local_part}"}, headers=crm.admin
    )
    assert resolved.status_code == 200, resolved.text
    async with crm.rt.db.engine.connect() as conn:
        misses = (await conn.execute(text("select phrase from resolve_misses"))).scalars().all()
    assert any(local_part in m for m in misses), misses
    erased = await crm.http.post(
        CRM + "/erasures", json={"records": ["Customer/C-9"], "reason": "request"}, headers=crm.admin
    )
    assert erased.status_code == 201, erased.text
    async with crm.rt.db.engine.connect() as conn:
        misses = (await conn.execute(text("select phrase from resolve_misses"))).scalars().all()
    assert not any(local_part in m for m in misses), misses


async def test_the_proposals_cursor_is_validated(supply: Stack) -> None:
    response = await supply.http.get(
        D + "/proposals", params={"cursor": "not-one-we-gave"}, headers=supply.admin
    )
    assert response.status_code == 400 and response.json()["code"] == "invalid-cursor", response.text


async def test_every_answer_carries_a_csp_and_nosniff(supply: Stack) -> None:
    for path, headers in (
        (D + "/kinds/Supplier/records/S-1001", supply.admin),
        (D + "/kinds/Supplier/records/S-0000", supply.admin),
        ("/openapi.json", {}),
        ("/health", {}),
        (D, BAD),
    ):
        response = await supply.http.get(path, headers=headers)
        assert response.headers["x-content-type-options"] == "nosniff", path
        assert "default-src 'none'" in response.headers["content-security-policy"], path
    docs = await supply.http.get("/docs")
    assert "script-src 'sha256-" in docs.headers["content-security-policy"]


@pytest.fixture
async def feed(supply: Stack, nats_url: str) -> AsyncIterator[Feed]:
    async with running_feed(supply, nats_url, relay=False) as running:
        yield running


async def test_the_operator_calls_need_the_admin_key(supply: Stack, feed: Feed) -> None:
    client = feed.client
    for credential in ("", "Bearer lbk_made_up"):
        with pytest.raises(Problem) as refused:
            await client.status(credential=credential)
        assert refused.value.status == 401
    viewer = await supply.principal("usr_status_viewer")
    with pytest.raises(Problem) as refused:
        await client.status(credential=viewer["Authorization"])
    assert refused.value.status == 401
    status = await client.status(credential=f"Bearer {ADMIN_KEY}")
    assert status.stream == feed.stream


async def test_a_store_that_cannot_be_reached_is_unavailable_not_an_error() -> None:
    db = Database.connect("postgresql+asyncpg://lorebase:x@127.0.0.1:9/lorebase", pool_size=1)
    try:
        with pytest.raises(StoreUnavailable):
            await db.read("probe", lambda txn: txn.list_domains())
    finally:
        await db.close()
