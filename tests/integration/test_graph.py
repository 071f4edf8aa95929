"""POST /neighborhood and POST /traverse on the supply example."""

from __future__ import annotations

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"


async def test_neighborhood_of_s1001_at_depth_one(supply: Stack) -> None:
    response = await supply.http.post(
        D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "depth": 1}, headers=supply.admin
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert response.headers["Lorebase-Revision"] == body["revision"]
    assert [(r["ref"], r["depth"]) for r in body["records"]] == [
        ("Supplier/S-1001", 0),
        ("Contract/C-3001", 1),
        ("Part/P-10028", 1),
    ]
    assert body["records"][2]["title"] == "Radial shaft seal 25x42x7"
    assert body["records"][2]["values"]["unit_cost"] == "24.01"
    supplied = next(link for link in body["links"] if link["relation"] == "supplied_by")
    assert supplied["from"] == "Part/P-10028" and supplied["to"] == "Supplier/S-1001"
    assert supplied["values"] == {"is_primary": True, "lead_time_days": "21"}
    assert body["capped"] is False
    headers_only = await supply.http.post(
        D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "values": False}, headers=supply.admin
    )
    assert all("values" not in r for r in headers_only.json()["records"])
    assert all("values" not in link for link in headers_only.json()["links"])


async def test_depth_relations_and_caps(supply: Stack) -> None:
    only = await supply.http.post(
        D + "/neighborhood",
        json={"refs": ["Supplier/S-1001"], "depth": 2, "relations": ["supplies", "stocked_at"]},
        headers=supply.admin,
    )
    kinds = {r["kind"] for r in only.json()["records"]}
    assert "Contract" not in kinds and "Part" in kinds
    seeds_only = await supply.http.post(
        D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "depth": 0}, headers=supply.admin
    )
    assert [r["ref"] for r in seeds_only.json()["records"]] == ["Supplier/S-1001"]
    deep = await supply.http.post(
        D + "/neighborhood", json={"refs": ["Supplier/S-1002"], "depth": 99}, headers=supply.admin
    )
    assert deep.status_code == 200 and deep.json()["capped"] is True


async def test_traverse_a_path(supply: Stack) -> None:
    response = await supply.http.post(
        D + "/traverse",
        json={"from": ["Supplier/S-1001"], "path": ["supplies", "purchase_orders"]},
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["path"][0] == {"relation": "supplies", "records": 1}
    assert all(r["kind"] == "PurchaseOrder" for r in body["records"])
    assert body["path"][1]["records"] == len(body["records"])
    wrong = await supply.http.post(
        D + "/traverse", json={"from": ["Supplier/S-1001"], "path": ["stocked_at"]}, headers=supply.admin
    )
    assert wrong.status_code == 422 and wrong.json()["issues"][0]["path"] == "path[0]"


async def test_graph_reads_never_show_invisible_kinds_and_refuse_bad_input(supply: Stack) -> None:
    viewer = await supply.principal("usr_sup")
    await supply.grant("supply", "usr_sup", "viewer", kinds=["Supplier", "Contract"])
    body = (
        await supply.http.post(
            D + "/neighborhood", json={"refs": ["Supplier/S-1001"], "depth": 2}, headers=viewer
        )
    ).json()
    assert {r["kind"] for r in body["records"]} == {"Supplier", "Contract"}
    assert {link["relation"] for link in body["links"]} == {"with_supplier"}
    for path, payload, status in (
        ("/neighborhood", {"refs": ["Part/P-10028"]}, 404),
        ("/neighborhood", {"refs": ["Supplier/S-9999"]}, 404),
        ("/neighborhood", {"refs": "Supplier/S-1001"}, 422),
        ("/neighborhood", {"refs": ["S-1001"]}, 422),
        ("/neighborhood", {"refs": ["Supplier/S-1001"], "depth": -1}, 422),
        ("/neighborhood", {"refs": ["Supplier/S-1001"], "relations": ["supplies"]}, 422),
        ("/traverse", {"from": ["Supplier/S-1001"], "path": ["supplies"]}, 422),
        ("/traverse", {"from": ["Supplier/S-1001"], "path": []}, 422),
        ("/traverse", {"from": ["Supplier/S-1001"], "path": ["contracts"], "extra": 1}, 422),
    ):
        response = await supply.http.post(D + path, json=payload, headers=viewer)
        assert response.status_code == status, (path, payload, response.text)
        assert response.headers["content-type"] == "application/problem+json"
