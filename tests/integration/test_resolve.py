"""POST /resolve on a retail Domain shaped like the seed's example, and on supply."""

from __future__ import annotations

from sqlalchemy import text

from lorebase.vocabulary import similarity
from tests.integration.conftest import Stack

SCHEMA = {
    "kinds": {
        "Product": {
            "key": ["sku"],
            "title": "name",
            "aliases": ["article"],
            "attributes": {
                "sku": {"type": "string"},
                "name": {"type": "string", "resolvable": False},
                "price": {"type": "decimal(10,2)", "aliases": ["cost"]},
                "color": {"type": "string", "value_aliases": {"Rosso": ["red"]}},
                "category": {"type": "string", "value_aliases": {"Calzature": ["shoes", "footwear"]}},
                "brand": {"type": "string"},
                "supplier_tax_id": {"type": "string", "sensitivity": ["confidential"]},
            },
        }
    }
}


async def retail(stack: Stack) -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "retail", "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    records = []
    for i in range(12):
        color = ["Rosso", "red", "blue"][i % 3]
        category = ["Calzature", "Borse"][i % 2]
        records.append(
            {
                "kind": "Product",
                "values": {
                    "sku": f"P{i}",
                    "name": f"Item {i}",
                    "price": f"{10 + i}.00",
                    "color": color,
                    "category": category,
                    "brand": ["Acme", "Zeta"][i % 2],
                    "supplier_tax_id": f"TAX{i}",
                },
            }
        )
    imported = await stack.http.post(
        "/api/v1/domains/retail/imports", json={"records": records}, headers=stack.admin
    )
    assert imported.status_code == 200


async def test_the_seed_example(stack: Stack) -> None:
    await retail(stack)
    response = await stack.http.post(
        "/api/v1/domains/retail/resolve", json={"text": "average price of red shoes"}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    body = response.json()
    by_target = {(c["target"], c.get("attribute")): c for c in body["candidates"]}
    price = by_target[("attribute", "price")]
    assert price == {
        "target": "attribute",
        "kind": "Product",
        "attribute": "price",
        "type": "decimal(10,2)",
        "score": 1.0,
        "level": "exact",
        "matched": "price",
    }
    color = by_target[("value", "color")]
    assert color["values"] == ["Rosso", "red"] and color["level"] == "exact" and color["matched"] == "red"
    assert color["predicate"] == {"attr": "color", "op": "in", "value": ["Rosso", "red"]}
    assert color["records"] == 8
    category = by_target[("value", "category")]
    assert (
        category["values"] == ["Calzature"] and category["level"] == "synonym" and category["score"] == 0.95
    )
    assert category["predicate"] == {"attr": "category", "op": "eq", "value": "Calzature"}
    assert category["records"] == 6 and category["matched"] == "shoes"
    assert body["unmatched"] == ["average", "of"]
    assert body["skipped"] == [{"level": "embedding", "reason": "other levels matched"}]
    assert body["hints"] == []
    # a function word is unmatched, yet no gap in the vocabulary: not in coverage.unknown (issue 16)
    assert body["coverage"]["unknown"] == ["average"]
    assert body["coverage"]["notes"][0] == "average: term unknown in this Domain"
    assert body["coverage"]["kinds"][0]["kind"] == "Product" and body["coverage"]["kinds"][0]["records"] == 12
    assert {(a["attribute"], tuple(a["used_in"])) for a in body["coverage"]["attributes"]} == {
        ("category", ("where",)),
        ("color", ("where",)),
        ("price", ("select",)),
    }
    # the predicates work as written
    query = await stack.http.post(
        "/api/v1/domains/retail/query",
        json={
            "kind": "Product",
            "where": {"and": [color["predicate"], category["predicate"]]},
            "aggregate": {"group_by": "brand"},
        },
        headers=stack.admin,
    )
    assert query.json()["aggregate"]["count"] == 4


async def test_similar_spelling_aliases_and_what_is_never_indexed(stack: Stack) -> None:
    await retail(stack)
    body = (
        await stack.http.post(
            "/api/v1/domains/retail/resolve", json={"text": "blu artcle cost TAX3 Item"}, headers=stack.admin
        )
    ).json()
    levels = {(c["target"], c.get("attribute"), c["level"]) for c in body["candidates"]}
    assert ("value", "color", "similar") in levels, "blu ~ blue"
    assert ("kind", None, "similar") in levels, "artcle ~ article (an alias of Product)"
    assert ("attribute", "price", "synonym") in levels
    assert all(c.get("attribute") != "supplier_tax_id" for c in body["candidates"]), (
        "sensitive values are never indexed"
    )
    assert not any(c["target"] == "value" and c.get("attribute") == "name" for c in body["candidates"]), (
        "resolvable: false"
    )
    async with stack.rt.db.engine.connect() as conn:
        misses = {
            row[0]: row[1] for row in await conn.execute(text("select phrase, count from resolve_misses"))
        }
    assert "tax3" in misses
    quiet = await stack.http.post(
        "/api/v1/domains/retail/resolve", json={"text": "zzzq", "record_misses": False}, headers=stack.admin
    )
    assert quiet.json()["skipped"] == [{"level": "embedding", "reason": "no query_vector"}]
    async with stack.rt.db.engine.connect() as conn:
        assert await conn.scalar(text("select count(*) from resolve_misses where phrase = 'zzzq'")) == 0


async def test_resolve_on_supply_and_bad_input(supply: Stack) -> None:
    body = (
        await supply.http.post(
            "/api/v1/domains/supply/resolve",
            json={"text": "active suppliers in PL with risk score"},
            headers=supply.admin,
        )
    ).json()
    found = {(c["target"], c["kind"], c.get("attribute")) for c in body["candidates"]}
    assert ("value", "Supplier", "status") in found
    assert ("attribute", "Supplier", "risk_score") in found, "risk score ~ risk_score"
    viewer = await supply.principal("usr_p")
    await supply.grant("supply", "usr_p", "viewer", kinds=["Part"])
    hidden = (
        await supply.http.post(
            "/api/v1/domains/supply/resolve", json={"text": "risk score seal"}, headers=viewer
        )
    ).json()
    assert all(c["kind"] == "Part" for c in hidden["candidates"])
    for payload, status in (
        ({}, 422),
        ({"text": " "}, 422),
        ({"text": "x", "kinds": ["Supplier"]}, 404),
        ({"text": "x", "query_vector": "v"}, 422),
    ):
        response = await supply.http.post("/api/v1/domains/supply/resolve", json=payload, headers=viewer)
        assert response.status_code == status, (payload, response.text)


async def test_trigram_similarity_agrees_with_pg_trgm(stack: Stack) -> None:
    pairs = [
        ("blu", "blue"),
        ("artcle", "article"),
        ("Kavsen Aloys", "Kavsen Alloys"),
        ("abc", "xyz"),
        ("Poznań", "Poznan"),
    ]
    async with stack.rt.db.engine.connect() as conn:
        for left, right in pairs:
            expected = await conn.scalar(text("select similarity(:a, :b)"), {"a": left, "b": right})
            assert abs(similarity(left, right) - expected) < 1e-6, (left, right)


async def test_at_reads_the_values_of_that_revision(stack: Stack) -> None:
    await retail(stack)
    before = (await stack.http.get("/api/v1/domains/retail/branches/main", headers=stack.admin)).json()[
        "head"
    ]
    added = await stack.http.post(
        "/api/v1/domains/retail/imports",
        json={"records": [{"kind": "Product", "values": {"sku": "P99", "color": "verde"}}]},
        headers=stack.admin,
    )
    assert added.status_code == 200, added.text

    async def colors(at: str | None) -> list[dict]:
        body = {"text": "verde blue", "record_misses": False, **({"at": at} if at else {})}
        response = await stack.http.post("/api/v1/domains/retail/resolve", json=body, headers=stack.admin)
        assert response.status_code == 200, response.text
        return [c for c in response.json()["candidates"] if c["target"] == "value"]

    now = await colors(None)
    assert {c["matched"] for c in now} == {"verde", "blue"}
    then = await colors(before)
    assert [c["matched"] for c in then] == ["blue"], "verde exists only after the at Revision"
    assert then[0]["records"] == 4
    resolved = await stack.http.post(
        "/api/v1/domains/retail/resolve", json={"text": "verde", "at": before}, headers=stack.admin
    )
    assert resolved.json()["unmatched"] == ["verde"] and resolved.json()["revision"] == before
