"""Sources: source syncs (full and incremental), the coverage they feed, and lineage naming them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.integration.conftest import Stack

SCHEMA = {
    "kinds": {
        "Product": {
            "key": ["sku"],
            "title": "name",
            "attributes": {"sku": {"type": "string"}, "name": {"type": "string"}},
        },
        "Secret": {"key": ["code"], "attributes": {"code": {"type": "string"}}},
    },
    "sources": {
        "erp_products": {"kinds": ["Product"], "stale_after": "P1D", "description": "The ERP"},
        "pim": {"kinds": ["Product"], "stale_after": "PT6H"},
        "vault": {"kinds": ["Secret"], "stale_after": "P7D"},
    },
}
D = "/api/v1/domains/shop"


def products(*skus: str) -> list[dict[str, Any]]:
    return [{"kind": "Product", "values": {"sku": s, "name": f"Product {s}"}} for s in skus]


async def shop(stack: Stack) -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "shop", "schema": SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text


async def sync(stack: Stack, body: dict[str, Any], source: str = "erp_products", **kw: Any) -> Any:
    return await stack.http.post(
        f"{D}/sources/{source}/sync", json=body, headers=kw.get("headers", stack.admin)
    )


async def sources_of(stack: Stack, headers: dict[str, str] | None = None) -> dict[str, Any]:
    response = await stack.http.post(f"{D}/query", json={"kind": "Product"}, headers=headers or stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json()["coverage"])


async def test_full_syncs_feed_coverage_unseen_and_stale(stack: Stack) -> None:
    await shop(stack)
    before = await sources_of(stack)
    assert before["sources"] == [
        {
            "kind": "Product",
            "source": "erp_products",
            "last_synced_at": None,
            "stale_after": "P1D",
            "stale": True,
            "unseen_records": 0,
        },
        {
            "kind": "Product",
            "source": "pim",
            "last_synced_at": None,
            "stale_after": "PT6H",
            "stale": True,
            "unseen_records": 0,
        },
    ]
    assert (
        "Product from Source erp_products: never synchronized; its Records may be missing" in before["notes"]
    )

    first = await sync(stack, {"records": products("A", "B", "C")})
    assert first.status_code == 200, first.text
    doc = first.json()
    assert doc["sync"] == 1 and doc["mode"] == "full" and doc["source"] == "erp_products"
    assert doc["changed"] == {"records": 3, "links": 0}
    second = await sync(stack, {"records": products("A", "C"), "message": "Nightly ERP listing"})
    assert second.status_code == 200, second.text
    assert second.json()["sync"] == 2 and second.json()["revision"] is None, "nothing changed"

    coverage = await sources_of(stack)
    erp = coverage["sources"][0]
    assert erp["source"] == "erp_products" and erp["stale"] is False and erp["unseen_records"] == 1
    assert erp["last_synced_at"] is not None
    assert (
        "Product from Source erp_products: 1 Record delivered before is not in its last full sync "
        "(unseen_records); they may be gone at the Source" in coverage["notes"]
    )

    # An incremental sync lists what changed only: it makes nothing unseen, and a key it lists is seen.
    inc = await sync(stack, {"records": products("D"), "mode": "incremental"})
    assert inc.status_code == 200 and inc.json()["sync"] == 3
    assert (await sources_of(stack))["sources"][0]["unseen_records"] == 1
    assert (await sync(stack, {"records": products("B"), "mode": "incremental"})).status_code == 200
    assert (await sources_of(stack))["sources"][0]["unseen_records"] == 0

    # Stale: the last sync is older than stale_after; the note is the seed's.
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("update source_syncs set synced_at = '2026-10-29T03:00:00+00:00'"))
    old = await sources_of(stack)
    assert old["sources"][0]["stale"] is True
    assert old["sources"][0]["last_synced_at"] == "2026-10-29T03:00:00Z"
    assert (
        "Product from Source erp_products: last synchronized 2026-10-29T03:00:00+00:00, older than stale_after P1D"
        in old["notes"]
    )

    # Sources describe the default branch head only.
    at = (
        await stack.http.post(
            f"{D}/query", json={"kind": "Product", "at": doc["revision"]}, headers=stack.admin
        )
    ).json()
    assert at["coverage"]["sources"] == [] and "omitted" in at["coverage"]

    # Resolve's coverage names the Sources of the Kinds it matched.
    resolved = (await stack.http.post(f"{D}/resolve", json={"text": "product"}, headers=stack.admin)).json()
    assert [s["source"] for s in resolved["coverage"]["sources"]] == ["erp_products", "pim"]


async def test_lineage_and_explain_name_the_source(stack: Stack) -> None:
    await shop(stack)
    synced = await sync(stack, {"records": products("A")})
    revision = synced.json()["revision"]
    lineage = (await stack.http.get(f"{D}/kinds/Product/records/A/lineage", headers=stack.admin)).json()
    name = lineage["attributes"]["name"] if "attributes" in lineage else lineage["lineage"]["name"]
    assert name["origin"] == {"type": "source_sync", "ref": "erp_products"}
    assert name["source"]["name"] == "erp_products" and name["source"]["sync"] == 1
    assert name["revision"] == revision
    explained = (await stack.http.get(f"{D}/kinds/Product/records/A/explain", headers=stack.admin)).json()
    assert explained["created"]["origin"] == {"type": "source_sync", "ref": "erp_products"}
    attribute = next(a for a in explained["attributes"] if a["name"] == "name")
    assert attribute["source"]["name"] == "erp_products"


async def test_rejected_syncs_change_nothing(stack: Stack) -> None:
    await shop(stack)
    unknown = await sync(stack, {"records": products("A")}, source="nowhere")
    assert unknown.status_code == 404 and "nowhere" in unknown.json()["detail"]
    undeclared = await sync(stack, {"records": [{"kind": "Secret", "values": {"code": "X"}}] + products("A")})
    assert undeclared.status_code == 422, undeclared.text
    issue = undeclared.json()["issues"][0]
    assert issue["path"] == "records[0].kind" and issue["rule"] == "source.kind"
    bad_mode = await sync(stack, {"records": products("A"), "mode": "partial"})
    assert bad_mode.status_code == 422 and "incremental" in bad_mode.json()["detail"]
    assert await stack.count("source_syncs") == 0
    assert await stack.count("source_keys") == 0
    assert await stack.count("records") == 0


async def test_idempotent_replay_records_one_sync(stack: Stack) -> None:
    await shop(stack)
    headers = {**stack.admin, "Idempotency-Key": "erp-2026-10-29"}
    first = await sync(stack, {"records": products("A", "B")}, headers=headers)
    again = await sync(stack, {"records": products("A", "B")}, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["sync"] == 1 and again.json()["replayed"] is True
    assert await stack.count("source_syncs") == 1
    reused = await sync(stack, {"records": products("A")}, headers=headers)
    assert reused.status_code == 422


async def test_narrowed_grants_never_see_a_source_of_an_unreadable_kind(stack: Stack) -> None:
    await shop(stack)
    assert (
        await sync(stack, {"records": [{"kind": "Secret", "values": {"code": "X"}}]}, source="vault")
    ).status_code == 200
    reader = await stack.principal("usr_products")
    await stack.grant("shop", "usr_products", "admin", kinds=["Product"])
    schema = (await stack.http.get(f"{D}/schema", headers=reader)).json()
    assert [s["name"] for s in schema["sources"]] == ["erp_products", "pim"]
    secret = await stack.http.post(f"{D}/query", json={"kind": "Secret"}, headers=reader)
    assert secret.status_code == 404
    hidden = await sync(stack, {"records": []}, source="vault", headers=reader)
    assert hidden.status_code == 404
    assert {s["source"] for s in (await sources_of(stack, reader))["sources"]} == {"erp_products", "pim"}
