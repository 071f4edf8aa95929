"""The coverage block of POST /query, and Scribe's statistics recount."""

from __future__ import annotations

from lorebase_scribe.statistics import recount

from tests.integration.conftest import Stack

Q = "/api/v1/domains/supply/query"


async def test_coverage_counts_missing_values_and_says_so(supply: Stack) -> None:
    flagged = await supply.http.post(
        "/api/v1/domains/supply/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1002", "severity": "high", "reason": "Late"}},
        headers=supply.admin,
    )
    assert flagged.status_code == 200, "the flag Operation sets no raised_on"
    response = await supply.http.post(
        Q,
        json={
            "kind": "RiskFlag",
            "where": {"attr": "raised_on", "op": "is_null", "value": False},
            "select": ["severity"],
        },
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    coverage = body["coverage"]
    assert coverage["kinds"] == [
        {"kind": "RiskFlag", "records": 16, "as_of": body["revision"], "approximate": False}
    ]
    raised = next(a for a in coverage["attributes"] if a["attribute"] == "raised_on")
    assert raised == {
        "kind": "RiskFlag",
        "attribute": "raised_on",
        "missing": 0.0625,
        "missing_records": 1,
        "used_in": ["where"],
    }
    severity = next(a for a in coverage["attributes"] if a["attribute"] == "severity")
    assert severity == {
        "kind": "RiskFlag",
        "attribute": "severity",
        "missing": 0.0,
        "missing_records": 0,
        "used_in": ["select"],
    }
    assert coverage["notes"] == ["raised_on missing on 6.2% of RiskFlag: a filter on raised_on excludes them"]
    assert coverage["sources"] == []
    off = (
        await supply.http.post(Q, json={"kind": "RiskFlag", "coverage": False}, headers=supply.admin)
    ).json()
    assert "coverage" not in off


async def test_statistics_from_scribe_are_marked_approximate_after_a_commit(supply: Stack) -> None:
    assert await recount(supply.rt.db) == 6
    assert await recount(supply.rt.db) == 0, "nothing to do while the head stands still"
    fresh = (
        await supply.http.post(
            Q, json={"kind": "Supplier", "aggregate": {"group_by": "status"}}, headers=supply.admin
        )
    ).json()
    assert fresh["coverage"]["kinds"][0]["approximate"] is False
    assert fresh["coverage"]["attributes"][0]["used_in"] == ["group_by"]
    await supply.http.post(
        "/api/v1/domains/supply/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1005", "risk_score": 3}},
        headers=supply.admin,
    )
    stale = (await supply.http.post(Q, json={"kind": "Supplier"}, headers=supply.admin)).json()
    assert stale["coverage"]["kinds"][0]["approximate"] is True
    assert stale["coverage"]["kinds"][0]["as_of"] == fresh["revision"] != stale["revision"]
    assert await recount(supply.rt.db) == 6


async def test_a_kind_scribe_has_not_counted_is_counted_once_then_served_as_approximate(
    supply: Stack,
) -> None:
    flags = {"kind": "RiskFlag", "select": ["severity"]}
    first = (await supply.http.post(Q, json=flags, headers=supply.admin)).json()
    assert first["coverage"]["kinds"] == [
        {"kind": "RiskFlag", "records": 15, "as_of": first["revision"], "approximate": False}
    ]
    flagged = await supply.http.post(
        "/api/v1/domains/supply/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1002", "severity": "high", "reason": "Late"}},
        headers=supply.admin,
    )
    assert flagged.status_code == 200, flagged.text
    # Not scanned again at the new head: the count of the head before, said to be approximate.
    later = (await supply.http.post(Q, json=flags, headers=supply.admin)).json()
    assert later["revision"] != first["revision"] and len(later["records"]) == 16
    assert later["coverage"]["kinds"] == [
        {"kind": "RiskFlag", "records": 15, "as_of": first["revision"], "approximate": True}
    ]
    assert await recount(supply.rt.db) == 6  # Scribe's statistics take over
    counted = (await supply.http.post(Q, json=flags, headers=supply.admin)).json()
    assert counted["coverage"]["kinds"] == [
        {"kind": "RiskFlag", "records": 16, "as_of": later["revision"], "approximate": False}
    ]


async def test_coverage_is_omitted_off_the_default_head_and_hides_what_the_caller_cannot_read(
    supply: Stack,
) -> None:
    first_revision = (
        await supply.http.get(
            "/api/v1/domains/supply/kinds/Supplier/records/S-1001/history", headers=supply.admin
        )
    ).json()["changes"][-1]["revision"]
    at = (
        await supply.http.post(Q, json={"kind": "Supplier", "at": first_revision}, headers=supply.admin)
    ).json()
    assert at["coverage"]["omitted"].startswith("statistics describe the default branch head only")
    editor_key = (await supply.http.post("/api/v1/principals/usr_editor/keys", headers=supply.admin)).json()[
        "key"
    ]
    editor = {"Authorization": f"Bearer {editor_key}"}
    hidden = await supply.http.post(
        Q, json={"kind": "Supplier", "where": {"attr": "vat_number", "op": "is_null"}}, headers=editor
    )
    assert hidden.status_code == 422, "an Attribute without clearance cannot be filtered on"
    bad = await supply.http.post(Q, json={"kind": "Supplier", "coverage": "yes"}, headers=supply.admin)
    assert bad.status_code == 422
