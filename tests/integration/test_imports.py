"""Imports: one Revision for many Records and Links (large ones go in by COPY), upserts, history."""

from __future__ import annotations

import asyncio

import pytest
from lorebase_keeper.writes import planner_statistics
from sqlalchemy import text

from tests.integration.conftest import Stack

SCHEMA = {
    "kinds": {
        "Item": {
            "key": ["sku"],
            "title": "name",
            "attributes": {
                "sku": {"type": "string", "required": True},
                "name": {"type": "string"},
                "qty": {"type": "integer", "min": 0},
                "code": {"type": "string", "unique": True},
            },
        },
        "Bin": {"key": ["bin"], "attributes": {"bin": {"type": "string"}}},
    },
    "relations": {
        "stored_in": {"from": "Item", "to": "Bin", "cardinality": "many_to_one", "inverse": "holds"}
    },
}


async def test_large_import_is_one_revision_and_reimport_updates(stack: Stack) -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "bulk", "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201
    count = 5000
    records = [
        {"kind": "Item", "values": {"sku": f"I{i:05d}", "name": f"Item {i}", "qty": i, "code": f"C{i}"}}
        for i in range(count)
    ]
    records += [{"kind": "Bin", "values": {"bin": f"B{i}"}} for i in range(10)]
    links = [{"relation": "stored_in", "from": f"I{i:05d}", "to": f"B{i % 10}"} for i in range(count)]
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports",
        json={"source": "erp", "records": records, "links": links},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text[:500]
    body = response.json()
    assert body["changed"] == {"records": count + 10, "links": count}
    assert await stack.count("revisions") == 1
    assert await stack.count("history") == 2 * count + 10
    item = (
        await stack.http.get(
            "/api/v1/domains/bulk/kinds/Item/records/I04242?lineage=true&links=true", headers=stack.admin
        )
    ).json()
    assert item["values"] == {"sku": "I04242", "name": "Item 4242", "qty": "4242", "code": "C4242"}
    assert item["lineage"]["qty"]["origin"] == {"type": "import", "ref": "erp"}
    assert item["links"] == {"stored_in": 1}
    held = await stack.http.get(
        "/api/v1/domains/bulk/kinds/Bin/records/B3/links/holds?limit=1000", headers=stack.admin
    )
    assert len(held.json()["links"]) == count // 10

    # A second import changes some Records and leaves the rest: only the changes are history.
    again = [
        {"kind": "Item", "values": {"sku": f"I{i:05d}", "qty": i + 1 if i < 2500 else i}}
        for i in range(count)
    ]
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"source": "erp", "records": again}, headers=stack.admin
    )
    assert response.status_code == 200, response.text[:500]
    assert response.json()["changed"] == {"records": 2500, "links": 0}
    assert await stack.count("history") == 2 * count + 10 + 2500
    item = (
        await stack.http.get("/api/v1/domains/bulk/kinds/Item/records/I00001", headers=stack.admin)
    ).json()
    assert item["values"]["qty"] == "2" and item["values"]["name"] == "Item 1"


async def test_import_checks_unique_values_within_and_across_imports(stack: Stack) -> None:
    await stack.http.post("/api/v1/domains", json={"name": "bulk", "schema": SCHEMA}, headers=stack.admin)
    dup = [{"kind": "Item", "values": {"sku": f"I{i}", "code": "SAME"}} for i in range(3)]
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"records": dup}, headers=stack.admin
    )
    assert response.status_code == 422
    assert {i["rule"] for i in response.json()["issues"]} == {"value.unique"}
    assert await stack.count("revisions") == 0
    first = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"records": dup[:1]}, headers=stack.admin
    )
    assert first.status_code == 200
    clash = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"records": dup[1:2]}, headers=stack.admin
    )
    assert clash.status_code == 422
    assert "I0" in clash.json()["issues"][0]["message"]


async def test_an_import_with_many_links_to_a_many_to_one_relation(stack: Stack) -> None:
    """Tens of thousands of Links are checked (ends, cardinality) and written without hitting
    parameter or expression limits of PostgreSQL."""
    await stack.http.post("/api/v1/domains", json={"name": "bulk", "schema": SCHEMA}, headers=stack.admin)
    count = 40_000
    records = [{"kind": "Bin", "values": {"bin": f"B{i}"}} for i in range(100)]
    records += [{"kind": "Item", "values": {"sku": f"I{i:06d}", "code": f"C{i}"}} for i in range(count)]
    links = [{"relation": "stored_in", "from": f"I{i:06d}", "to": f"B{i % 100}"} for i in range(count)]
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"records": records, "links": links}, headers=stack.admin
    )
    assert response.status_code == 200, response.text[:300]
    assert response.json()["changed"] == {"records": count + 100, "links": count}
    again = [{"relation": "stored_in", "from": f"I{i:06d}", "to": f"B{(i + 1) % 100}"} for i in range(count)]
    clash = await stack.http.post("/api/v1/domains/bulk/imports", json={"links": again}, headers=stack.admin)
    assert clash.status_code == 422, "many_to_one: each Item is in one Bin already"
    assert clash.json()["issues"][0]["rule"] == "link.cardinality"
    assert clash.json()["issues_truncated"] is True and len(clash.json()["issues"]) == 100


async def test_a_large_import_refreshes_the_planner_statistics(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Right after a large import the planner would still plan with the statistics of an empty
    # Domain: the import runs ANALYZE once it has committed (lorebase_keeper.writes.planner_statistics).
    monkeypatch.setattr(planner_statistics, "ANALYZE_AFTER", 3)

    async def analyzed() -> int:
        async with stack.rt.db.engine.connect() as conn:
            count = await conn.scalar(
                text("select analyze_count from pg_stat_user_tables where relname = 'records'")
            )
            return int(count or 0)

    before = await analyzed()
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "stats", "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    small = {"source": "t", "records": [{"kind": "Bin", "values": {"bin": "B-1"}}]}
    assert (
        await stack.http.post("/api/v1/domains/stats/imports", json=small, headers=stack.admin)
    ).status_code == 200
    records = [{"kind": "Bin", "values": {"bin": f"B-{i}"}} for i in range(2, 6)]
    answer = await stack.http.post(
        "/api/v1/domains/stats/imports", json={"source": "t", "records": records}, headers=stack.admin
    )
    assert answer.status_code == 200, answer.text
    async with asyncio.timeout(20):
        while await analyzed() == before:  # noqa: ASYNC110 (PostgreSQL's counters, no event)
            await asyncio.sleep(0.05)
