"""Record reads, Links, time travel with `at`, the schema, queries and Kind-narrowed grants."""

from __future__ import annotations

from tests.integration.conftest import Stack

DOMAIN = "/api/v1/domains/supply"


async def revisions(stack: Stack) -> list[str]:
    from sqlalchemy import text

    async with stack.rt.db.engine.connect() as conn:
        return [row[0] for row in await conn.execute(text("select id from revisions order by generation"))]


async def test_record_with_link_counts_and_lineage(supply: Stack) -> None:
    response = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?links=true&lineage=true", headers=supply.admin
    )
    assert response.status_code == 200
    body = response.json()
    assert body["ref"] == "Supplier/S-1001"
    assert body["title"] == "Kavsen Alloys Sp. z o.o."
    assert body["links"] == {"supplies": 1, "contracts": 1, "risk_flags": 0}
    first, second = await revisions(supply)
    assert body["lineage"]["risk_score"]["revision"] == second
    assert body["lineage"]["risk_score"]["actor"] == "usr_editor"
    assert body["lineage"]["legal_name"]["revision"] == first
    assert body["lineage"]["legal_name"]["origin"] == {"type": "import", "ref": "examples/supply"}
    assert list(body["values"])[:3] == ["supplier_code", "legal_name", "vat_number"]


async def test_read_at_an_earlier_revision_comes_from_history(supply: Stack) -> None:
    first, second = await revisions(supply)
    earlier = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?at={first}", headers=supply.admin
    )
    assert earlier.status_code == 200
    assert earlier.json()["values"]["risk_score"] == "72"
    assert earlier.json()["revision"] == first
    assert earlier.headers["Lorebase-Revision"] == first
    short = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?at={first[:12]}", headers=supply.admin
    )
    assert short.json()["values"]["risk_score"] == "72"
    now = await supply.http.get(f"{DOMAIN}/kinds/Supplier/records/S-1001?at={second}", headers=supply.admin)
    assert now.json()["values"]["risk_score"] == "90"
    links = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001/links/supplies?at={first}", headers=supply.admin
    )
    assert [link["from"] for link in links.json()["links"]] == ["Part/P-10028"]


async def test_bad_at_answers_4xx(supply: Stack) -> None:
    # Not a name at all: 400. A name that is neither a Revision nor a tag: 404, as an unknown Revision.
    bad = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?at=last%20week", headers=supply.admin
    )
    assert bad.status_code == 400
    assert bad.json()["type"].endswith("/invalid-at")
    untagged = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?at=yesterday", headers=supply.admin
    )
    assert untagged.status_code == 404
    assert untagged.json()["type"].endswith("/revision-not-found")
    unknown = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001?at={'0' * 64}", headers=supply.admin
    )
    assert unknown.status_code == 404
    assert unknown.json()["type"].endswith("/revision-not-found")


async def test_links_forward_and_inverse(supply: Stack) -> None:
    forward = await supply.http.get(
        f"{DOMAIN}/kinds/Part/records/P-10028/links/supplied_by", headers=supply.admin
    )
    assert forward.status_code == 200
    body = forward.json()
    assert body["direction"] == "forward"
    assert body["links"] == [
        {
            "from": "Part/P-10028",
            "to": "Supplier/S-1001",
            "values": {"is_primary": True, "lead_time_days": "21"},
            "revision": body["links"][0]["revision"],
        }
    ]
    inverse = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001/links/contracts", headers=supply.admin
    )
    assert inverse.json()["direction"] == "inverse"
    assert [link["from"] for link in inverse.json()["links"]] == ["Contract/C-3001"]
    wrong_end = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001/links/supplied_by", headers=supply.admin
    )
    assert wrong_end.status_code == 404


async def test_links_page_with_cursor(supply: Stack) -> None:
    seen = []
    cursor = ""
    for _ in range(20):
        response = await supply.http.get(
            f"{DOMAIN}/kinds/Supplier/records/S-1002/links/supplies?limit=2&cursor={cursor}",
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        seen += [link["from"] for link in response.json()["links"]]
        cursor = response.json()["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) >= 2
    everything = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1002/links/supplies", headers=supply.admin
    )
    assert [link["from"] for link in everything.json()["links"]] == seen


async def test_etag_and_if_none_match(supply: Stack) -> None:
    first = await supply.http.get(f"{DOMAIN}/kinds/Supplier/records/S-1001", headers=supply.admin)
    etag = first.headers["ETag"]
    again = await supply.http.get(
        f"{DOMAIN}/kinds/Supplier/records/S-1001", headers={**supply.admin, "If-None-Match": etag}
    )
    assert again.status_code == 304


async def test_query_filters_order_and_paging(supply: Stack) -> None:
    async def query(body: dict) -> dict:
        response = await supply.http.post(f"{DOMAIN}/query", json=body, headers=supply.admin)
        assert response.status_code == 200, response.text
        assert response.headers["Lorebase-Revision"] == response.json()["revision"]
        return response.json()

    high = await query(
        {
            "kind": "Supplier",
            "where": {"attr": "risk_score", "op": "ge", "value": 80},
            "order_by": ["-risk_score"],
        }
    )
    scores = [int(r["values"]["risk_score"]) for r in high["records"]]
    assert scores == sorted(scores, reverse=True) and all(s >= 80 for s in scores)
    assert "Supplier/S-1001" in [r["ref"] for r in high["records"]]
    polish = await query(
        {
            "kind": "Supplier",
            "where": {
                "and": [
                    {"attr": "country", "op": "eq", "value": "PL"},
                    {"not": {"attr": "status", "op": "eq", "value": "blocked"}},
                ]
            },
            "select": ["legal_name"],
        }
    )
    assert polish["records"] and all(set(r["values"]) <= {"legal_name"} for r in polish["records"])
    seals = await query(
        {
            "kind": "Part",
            "where": {
                "or": [
                    {"attr": "category", "op": "in", "value": ["seal"]},
                    {"attr": "name", "op": "contains", "value": "SHAFT"},
                ]
            },
        }
    )
    assert "Part/P-10028" in [r["ref"] for r in seals["records"]]
    prefixed = await query(
        {"kind": "Part", "where": {"attr": "part_number", "op": "prefix", "value": "P-1000"}}
    )
    assert {r["key"] for r in prefixed["records"]} == {f"P-1000{i}" for i in range(1, 10)}
    missing = await query(
        {
            "kind": "RiskFlag",
            "where": {"attr": "raised_on", "op": "is_null", "value": True},
            "aggregate": {"count": True},
        }
    )
    assert missing["aggregate"]["count"] >= 0
    pages, cursor = [], None
    while True:
        body = {"kind": "PurchaseOrder", "limit": 20, "order_by": ["po_number"]}
        if cursor:
            body["cursor"] = cursor
        page = await query(body)
        pages += [r["key"] for r in page["records"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert pages == [f"PO-2000{i:02d}" for i in range(1, 51)]


async def test_query_aggregate_group_by_and_trait(supply: Stack) -> None:
    response = await supply.http.post(
        f"{DOMAIN}/query",
        json={"kind": "Supplier", "aggregate": {"group_by": "status"}},
        headers=supply.admin,
    )
    groups = {g["value"]: g["count"] for g in response.json()["aggregate"]["groups"]}
    assert sum(groups.values()) == 30 and groups["active"] >= 1
    located = await supply.http.post(
        f"{DOMAIN}/query",
        json={"trait": "Located", "where": {"attr": "country", "op": "eq", "value": "PL"}, "limit": 100},
        headers=supply.admin,
    )
    kinds = {r["kind"] for r in located.json()["records"]}
    assert kinds <= {"Supplier", "Plant"} and "Supplier" in kinds


async def test_query_problems_name_the_path(supply: Stack) -> None:
    response = await supply.http.post(
        f"{DOMAIN}/query",
        json={
            "kind": "Supplier",
            "where": {
                "and": [
                    {"attr": "risk", "op": "eq", "value": 1},
                    {"attr": "risk_score", "op": "approx", "value": 1},
                ]
            },
        },
        headers=supply.admin,
    )
    assert response.status_code == 422
    paths = [i["path"] for i in response.json()["issues"]]
    assert "where.and[0].attr" in paths and "where.and[1].op" in paths
    too_many = await supply.http.post(
        f"{DOMAIN}/query", json={"kind": "Supplier", "limit": 100000}, headers=supply.admin
    )
    assert too_many.status_code == 422


async def test_kind_narrowed_grant_makes_other_kinds_invisible(supply: Stack) -> None:
    viewer = await supply.principal("usr_buyer")
    await supply.grant("supply", "usr_buyer", "viewer", kinds=["Supplier"])
    schema = (await supply.http.get(f"{DOMAIN}/schema", headers=viewer)).json()
    assert [k["name"] for k in schema["kinds"]] == ["Supplier"]
    assert schema["relations"] == []
    assert [t["name"] for t in schema["traits"]] == ["Located"]
    assert schema["traits"][0]["kinds"] == ["Supplier"]
    assert [lens["name"] for lens in schema["lenses"]] == ["supplier_risk"]
    assert schema["lenses"][0]["kinds"] == ["Supplier"]
    invisible = await supply.http.get(f"{DOMAIN}/kinds/Part/records/P-10028", headers=viewer)
    unknown = await supply.http.get(f"{DOMAIN}/kinds/Gizmo/records/P-10028", headers=viewer)
    assert invisible.status_code == unknown.status_code == 404
    assert invisible.json()["detail"].replace("Part", "X") == unknown.json()["detail"].replace("Gizmo", "X")
    record = (
        await supply.http.get(f"{DOMAIN}/kinds/Supplier/records/S-1001?links=true", headers=viewer)
    ).json()
    assert record["links"] == {}
    assert "vat_number" not in record["values"] and record["redacted"] == ["vat_number"]
    query = await supply.http.post(f"{DOMAIN}/query", json={"kind": "Part"}, headers=viewer)
    assert query.status_code == 404
    trait = await supply.http.post(f"{DOMAIN}/query", json={"trait": "Located", "limit": 200}, headers=viewer)
    assert {r["kind"] for r in trait.json()["records"]} == {"Supplier"}


async def test_principal_without_grant_sees_no_domain(supply: Stack) -> None:
    stranger = await supply.principal("usr_stranger")
    response = await supply.http.get(f"{DOMAIN}/kinds/Supplier/records/S-1001", headers=stranger)
    assert response.status_code == 404
    listed = await supply.http.get("/api/v1/domains", headers=stranger)
    assert listed.json()["domains"] == []


async def test_decimal_filters_compare_by_value(supply: Stack) -> None:
    for op, value in (("eq", "24.01"), ("eq", 24.010), ("in", ["24.01", "1.5"])):
        response = await supply.http.post(
            f"{DOMAIN}/query",
            json={"kind": "Part", "where": {"attr": "unit_cost", "op": op, "value": value}},
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        assert "Part/P-10028" in [r["ref"] for r in response.json()["records"]], (op, value)
    ne = await supply.http.post(
        f"{DOMAIN}/query",
        json={"kind": "Part", "where": {"attr": "unit_cost", "op": "ne", "value": "24.01"}, "limit": 100},
        headers=supply.admin,
    )
    assert "Part/P-10028" not in [r["ref"] for r in ne.json()["records"]]
