"""Scale-out (issue 17): two keeper replicas and two gateways over one PostgreSQL, as the Helm chart runs
them (each replica with its own pool and caches), answer as one store.

Gateway A reaches keeper 1 only and gateway B keeper 2 only, so every read through B of a write
made through A crosses replicas. A third gateway reaches both keepers through one address list
(`ipv4:host:port,host:port` with round_robin, what a headless Service resolves to in the chart).
Checked: writes through both gateways land on one branch; the same request at the same Revision
answers the same bytes through both; a client that saw Revision R from its own write through A
reads a state at R or later through B (a plain read is as fresh as the head: DESIGN.md,
"Consistency"), even right after B answered the same request from before the write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway

from lorebase.clients import (
    ClientSettings,
    FeedClient,
    KeeperClient,
    MemoryJournalClient,
    MemoryStoreClient,
    ScribeClient,
)
from lorebase.config import load_settings
from tests.integration.conftest import Stack, open_stack

DOMAIN = "/api/v1/domains/supply"
RECORD = f"{DOMAIN}/kinds/Supplier/records"
EXECUTE = f"{DOMAIN}/operations/update_supplier/execute"


@pytest_asyncio.fixture
async def replicas(database_url: str) -> AsyncIterator[tuple[Stack, Stack]]:
    """Keeper 1 behind gateway A and keeper 2 behind gateway B, on one database, supply loaded via A."""
    async with open_stack(database_url) as first, open_stack(database_url) as second:
        await first.supply()
        yield first, second


async def _generation(stack: Stack, revision: str) -> int:
    from sqlalchemy import text

    async with stack.rt.db.engine.connect() as conn:
        return int(
            await conn.scalar(text("select generation from revisions where id = :id"), {"id": revision})
        )


async def _execute(stack: Stack, key: str, risk: int) -> str:
    answer = await stack.http.post(
        EXECUTE, json={"parameters": {"key": key, "risk_score": risk}}, headers=stack.admin
    )
    assert answer.status_code == 200, answer.text
    return answer.headers["Lorebase-Revision"]


async def test_writes_through_both_gateways_land_on_one_branch(replicas: tuple[Stack, Stack]) -> None:
    a, b = replicas
    first = await _execute(a, "S-1001", 11)
    second = await _execute(b, "S-1002", 22)
    assert await _generation(a, second) == await _generation(a, first) + 1
    for stack in (a, b):
        head = await stack.http.get(f"{DOMAIN}/branches/main", headers=stack.admin)
        assert head.json()["head"] == second
        one = await stack.http.get(f"{RECORD}/S-1001", headers=stack.admin)
        two = await stack.http.get(f"{RECORD}/S-1002", headers=stack.admin)
        assert (one.json()["values"]["risk_score"], two.json()["values"]["risk_score"]) == ("11", "22")


async def test_same_request_at_same_revision_answers_same_bytes(replicas: tuple[Stack, Stack]) -> None:
    a, b = replicas
    earlier = await _execute(a, "S-1001", 33)
    await _execute(b, "S-1001", 44)
    for path in (
        f"{RECORD}/S-1001?at={earlier}",
        f"{RECORD}/S-1001",
        f"{RECORD}/S-1001/links/supplies?at={earlier}",
        f"{RECORD}/S-1001/history",
    ):
        through_a = await a.http.get(path, headers=a.admin)
        through_b = await b.http.get(path, headers=b.admin)
        assert through_a.status_code == through_b.status_code == 200, path
        assert through_a.headers["Lorebase-Revision"] == through_b.headers["Lorebase-Revision"], path
        assert through_a.content == through_b.content, path
        assert through_a.headers["ETag"] == through_b.headers["ETag"], path
    pinned = await b.http.get(f"{RECORD}/S-1001?at={earlier}", headers=b.admin)
    assert pinned.json()["values"]["risk_score"] == "33"


async def test_a_client_that_saw_revision_r_reads_r_or_later_through_the_other_gateway(
    replicas: tuple[Stack, Stack],
) -> None:
    a, b = replicas
    for round_ in range(5):
        # B answers the request once (warming whatever it keeps), then A writes, then B is asked again.
        before = await b.http.get(f"{RECORD}/S-1003", headers=b.admin)
        assert before.status_code == 200
        seen = await _execute(a, "S-1003", 50 + round_)
        after = await b.http.get(f"{RECORD}/S-1003", headers=b.admin)
        assert await _generation(a, after.headers["Lorebase-Revision"]) >= await _generation(a, seen)
        assert after.json()["values"]["risk_score"] == str(50 + round_)
        # The ETag B gave before the write no longer matches: B answers the new state, not 304.
        revalidated = await b.http.get(
            f"{RECORD}/S-1003", headers={**b.admin, "If-None-Match": before.headers["ETag"]}
        )
        assert revalidated.status_code == 200
        assert revalidated.json()["values"]["risk_score"] == str(50 + round_)


async def test_a_gateway_over_an_address_list_reaches_both_keepers(replicas: tuple[Stack, Stack]) -> None:
    a, b = replicas
    both = ClientSettings(
        address=f"ipv4:{a.keeper_address.address},{b.keeper_address.address}", deadline_s=30
    )
    gateway = Gateway.from_settings(load_settings({"LOREBASE_DATABASE_URL": a.database_url}))
    gateway.connect(KeeperClient(both), FeedClient(both), ScribeClient(both))
    gateway.connect_memory(MemoryStoreClient(both), MemoryJournalClient(both))
    transport = httpx.ASGITransport(app=create_app(gateway))
    async with httpx.AsyncClient(transport=transport, base_url="http://lorebase.test") as http:
        try:
            for risk in range(60, 66):
                written = await http.post(
                    EXECUTE, json={"parameters": {"key": "S-1004", "risk_score": risk}}, headers=a.admin
                )
                assert written.status_code == 200, written.text
                read = await http.get(f"{RECORD}/S-1004", headers=a.admin)
                assert read.headers["Lorebase-Revision"] == written.headers["Lorebase-Revision"]
                assert read.json()["values"]["risk_score"] == str(risk)
        finally:
            await gateway.close()
