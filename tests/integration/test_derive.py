"""Derived Attributes materialised on commit: imports, Operations, Links added and deleted, neighbours
changing, refused writes, history and health."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from lorebase.schema import parse_yaml
from lorebase_store.materialize import verify
from tests.integration.conftest import SUPPLY, Stack

D = "/api/v1/domains/derive"

DERIVED = {
    "Supplier": {
        "part_count": {"type": "integer", "derived": "count(supplies)"},
        "open_flags": {"type": "integer", "derived": "count(risk_flags where status == 'open')"},
        "top_cost": {"type": "decimal(10,2)", "derived": "coalesce(max(supplies.unit_cost), 0)"},
        "label": {"type": "string", "derived": "upper(country) + '/' + supplier_code"},
    },
    "Part": {"supplier_count": {"type": "integer", "derived": "count(supplied_by)"}},
}
OPERATIONS = {
    "drop_supply": {
        "parameters": {
            "part": {"type": "string", "required": True},
            "supplier": {"type": "string", "required": True},
        },
        "edits": [{"op": "delete_link", "relation": "supplied_by", "from": "$part", "to": "$supplier"}],
    },
    "delete_part": {
        "parameters": {"part": {"type": "string", "required": True}},
        "edits": [{"op": "delete_record", "kind": "Part", "key": "$part"}],
    },
}


def schema() -> dict[str, Any]:
    document = parse_yaml((SUPPLY / "schema.yaml").read_text())
    for kind, attributes in DERIVED.items():
        for name, attribute in attributes.items():
            document["kinds"][kind]["attributes"].setdefault(name, attribute)
    document["operations"].update(OPERATIONS)
    return document


def supplier(code: str, country: str = "pl") -> dict[str, Any]:
    return {
        "kind": "Supplier",
        "values": {"supplier_code": code, "legal_name": f"Supplier {code}", "country": country.upper()},
    }


def part(number: str, cost: str) -> dict[str, Any]:
    return {"kind": "Part", "values": {"part_number": number, "name": f"Part {number}", "unit_cost": cost}}


async def setup(stack: Stack) -> None:
    response = await stack.http.post(
        "/api/v1/domains", json={"name": "derive", "schema": schema()}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    body = {
        "source": "test",
        "records": [
            supplier("S-0001"),
            supplier("S-0002", "de"),
            part("P-00001", "10.50"),
            part("P-00002", "4"),
        ],
        "links": [
            {"relation": "supplied_by", "from": "P-00001", "to": "S-0001"},
            {"relation": "supplied_by", "from": "P-00002", "to": "S-0001"},
        ],
    }
    response = await stack.http.post(D + "/imports", json=body, headers=stack.admin)
    assert response.status_code == 200, response.text


async def values(stack: Stack, kind: str, key: str) -> dict[str, Any]:
    response = await stack.http.get(f"{D}/kinds/{kind}/records/{key}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json()["values"])


async def execute(stack: Stack, operation: str, **parameters: Any) -> dict[str, Any]:
    response = await stack.http.post(
        f"{D}/operations/{operation}/execute", json={"parameters": parameters}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def imported(stack: Stack, records: list[dict[str, Any]]) -> None:
    response = await stack.http.post(D + "/imports", json={"records": records}, headers=stack.admin)
    assert response.status_code == 200, response.text


async def test_derived_values_follow_links_and_neighbours(stack: Stack) -> None:
    await setup(stack)
    s1 = await values(stack, "Supplier", "S-0001")
    assert (s1["part_count"], s1["open_flags"], s1["top_cost"], s1["label"]) == (
        "2",
        "0",
        "10.50",
        "PL/S-0001",
    )
    s2 = await values(stack, "Supplier", "S-0002")
    assert (s2["part_count"], s2["top_cost"], s2["label"]) == ("0", "0.00", "DE/S-0002")
    assert (await values(stack, "Part", "P-00001"))["supplier_count"] == "1"

    # A Link created by an Operation (and the Record at its other end)
    body = await execute(stack, "flag_supplier_risk", supplier="S-0001", severity="high", reason="late")
    assert {
        "ref": "Supplier/S-0001",
        "entity": "record",
        "change": "modified",
        "attributes": ["open_flags"],
    } in (body["changes"])
    assert (await values(stack, "Supplier", "S-0001"))["open_flags"] == "1"

    # A neighbour changing an Attribute the aggregate filters on, or aggregates
    await imported(stack, [{"kind": "RiskFlag", "values": {"flag_id": "RF-S-0001-high", "status": "closed"}}])
    assert (await values(stack, "Supplier", "S-0001"))["open_flags"] == "0"
    await imported(stack, [part("P-00002", "99.99")])
    assert (await values(stack, "Supplier", "S-0001"))["top_cost"] == "99.99"
    # ... and an own Attribute a Derivation reads
    await imported(stack, [supplier("S-0001", "cz")])
    assert (await values(stack, "Supplier", "S-0001"))["label"] == "CZ/S-0001"

    # A Link deleted, then a neighbour deleted (its Links go with it)
    await execute(stack, "drop_supply", part="P-00002", supplier="S-0001")
    s1 = await values(stack, "Supplier", "S-0001")
    assert (s1["part_count"], s1["top_cost"]) == ("1", "10.50")
    assert (await values(stack, "Part", "P-00002"))["supplier_count"] == "0"
    await execute(stack, "delete_part", part="P-00001")
    s1 = await values(stack, "Supplier", "S-0001")
    assert (s1["part_count"], s1["top_cost"]) == ("0", "0.00")

    # History and lineage show the derived changes like any value
    history = (
        await stack.http.get(f"{D}/kinds/Supplier/records/S-0001/history?values=true", headers=stack.admin)
    ).json()
    newest = history["changes"][0]
    assert newest["attributes"] == ["part_count", "top_cost"]
    assert newest["before"] == {"part_count": "1", "top_cost": "10.50"}
    assert newest["provenance"]["part_count"]["revision"] == newest["revision"]
    assert any(c["attributes"] == ["open_flags"] for c in history["changes"])


async def test_a_write_supplying_a_derived_value_is_refused(stack: Stack) -> None:
    await setup(stack)
    revisions = await stack.count("revisions")
    response = await stack.http.post(
        D + "/imports",
        json={
            "records": [
                supplier("S-0003"),
                {"kind": "Supplier", "values": {**supplier("S-0001")["values"], "part_count": 7}},
            ]
        },
        headers=stack.admin,
    )
    assert response.status_code == 422, response.text
    issues = response.json()["issues"]
    assert [(i["path"], i["rule"]) for i in issues] == [("records[1].values.part_count", "value.derived")]
    assert "computed from its Derivation" in issues[0]["message"]
    assert await stack.count("revisions") == revisions
    missing = await stack.http.get(f"{D}/kinds/Supplier/records/S-0003", headers=stack.admin)
    assert missing.status_code == 404
    assert (await values(stack, "Supplier", "S-0001"))["part_count"] == "2"


async def test_health_counts_missing_derived_values_without_failing(stack: Stack) -> None:
    await setup(stack)
    body = (await stack.http.get(D + "/health", headers=stack.admin)).json()
    derived = {k["kind"]: k["derived"] for k in body["kinds"]}
    assert derived == {
        "Contract": None,
        "Part": 0,
        "Plant": None,
        "PurchaseOrder": None,
        "RiskFlag": None,
        "Supplier": 0,
    }
    assert body["summary"]["stale_derived_kinds"] == 0
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text("""update records set "values" = "values" - 'part_count' where key = 'S-0002'""")
        )
        await conn.execute(text("""update records set "values" = "values" - 'label' where key = 'S-0002'"""))
    stack.rt.read_cache.forget()  # the damage bypassed commits, so the head Revision did not move
    body = (await stack.http.get(D + "/health", headers=stack.admin)).json()
    supplier_report = next(k for k in body["kinds"] if k["kind"] == "Supplier")
    assert supplier_report["derived"] == 1 and supplier_report["invalid"] == 0
    assert body["summary"]["stale_derived_kinds"] == 1 and body["summary"]["ok"] is True
    markdown = (await stack.http.get(D + "/kinds/Supplier/health?format=markdown", headers=stack.admin)).text
    assert "kinds with stale derived values: 1" in markdown
    assert "| Supplier | 2 | 0 | 0 | 1 |" in markdown
    # verify recomputes every derived value: it sees missing and wrong values alike
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text(
                """update records set "values" = jsonb_set("values", '{part_count}', '"5"') where key = 'S-0001'"""
            )
        )
    domain = await stack.rt.domains.get("derive")
    found = await stack.rt.db.read("verify", lambda txn: verify(txn, domain.id, "main", domain.schema))
    assert {(m.kind, m.key, m.attribute, m.stored, m.computed) for m in found} == {
        ("Supplier", "S-0001", "part_count", "5", "2"),
        ("Supplier", "S-0002", "part_count", None, "0"),
        ("Supplier", "S-0002", "label", None, "DE/S-0002"),
    }
    # The next write to the Record heals the missing values
    await imported(stack, [supplier("S-0002", "de")])
    healed = await values(stack, "Supplier", "S-0002")
    assert (healed["part_count"], healed["label"]) == ("0", "DE/S-0002")


BULK = {
    "kinds": {
        "Item": {
            "key": ["sku"],
            "attributes": {
                "sku": {"type": "string"},
                "qty": {"type": "integer", "min": 0},
                "double": {"type": "integer", "derived": "qty * 2"},
            },
        },
        "Bin": {
            "key": ["bin"],
            "attributes": {
                "bin": {"type": "string"},
                "items": {"type": "integer", "derived": "count(holds)"},
                "stock": {"type": "integer", "derived": "sum(holds.qty)"},
            },
        },
    },
    "relations": {
        "stored_in": {"from": "Item", "to": "Bin", "cardinality": "many_to_one", "inverse": "holds"}
    },
}


async def test_a_large_import_materialises_in_batches(stack: Stack) -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "bulk", "schema": BULK}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    count = 5000
    records = [{"kind": "Item", "values": {"sku": f"I{i:05d}", "qty": i % 7}} for i in range(count)]
    records += [{"kind": "Bin", "values": {"bin": f"B{i}"}} for i in range(10)]
    links = [{"relation": "stored_in", "from": f"I{i:05d}", "to": f"B{i % 10}"} for i in range(count)]
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports", json={"records": records, "links": links}, headers=stack.admin
    )
    assert response.status_code == 200, response.text[:500]
    bin0 = (await stack.http.get("/api/v1/domains/bulk/kinds/Bin/records/B0", headers=stack.admin)).json()
    assert bin0["values"]["items"] == "500"
    assert bin0["values"]["stock"] == str(sum(i % 7 for i in range(0, count, 10)))
    item = (
        await stack.http.get("/api/v1/domains/bulk/kinds/Item/records/I00006", headers=stack.admin)
    ).json()
    assert item["values"]["double"] == "12"
    # Re-importing one Item with a new quantity moves its Bin's sum, and only that Bin changes
    response = await stack.http.post(
        "/api/v1/domains/bulk/imports",
        json={"records": [{"kind": "Item", "values": {"sku": "I00000", "qty": 100}}]},
        headers=stack.admin,
    )
    assert response.json()["changed"] == {"records": 2, "links": 0}
    bin0_after = (
        await stack.http.get("/api/v1/domains/bulk/kinds/Bin/records/B0", headers=stack.admin)
    ).json()
    assert int(bin0_after["values"]["stock"]) == int(bin0["values"]["stock"]) + 100


async def test_a_derived_count_over_a_hidden_kind_is_not_shown(supply: Stack) -> None:
    """open_flags counts RiskFlags: a grant narrowed to Supplier must not learn how many there are."""
    flagged = await supply.http.post(
        "/api/v1/domains/supply/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1001", "severity": "high", "reason": "Late"}},
        headers=supply.admin,
    )
    assert flagged.status_code == 200, flagged.text
    narrow = await supply.principal("usr_narrow")
    await supply.grant("supply", "usr_narrow", "viewer", kinds=["Supplier"])
    wide = (
        await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=supply.admin)
    ).json()
    assert wide["values"]["open_flags"] == "1"
    seen = (
        await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=narrow)
    ).json()
    assert "open_flags" not in seen["values"] and "open_flags" not in seen.get("redacted", [])
    schema = (await supply.http.get("/api/v1/domains/supply/schema", headers=narrow)).json()
    assert "open_flags" not in schema["kinds"][0]["attributes"]
    query = await supply.http.post(
        "/api/v1/domains/supply/query",
        json={"kind": "Supplier", "select": ["supplier_code", "open_flags"]},
        headers=narrow,
    )
    assert query.status_code in (200, 422), query.text
    if query.status_code == 200:
        assert all("open_flags" not in r.get("values", {}) for r in query.json()["records"])
