"""A value computed from anything the caller may not read is itself unreadable (issue: hardening 1).

`Supplier.open_flags` counts RiskFlags. A viewer narrowed to Supplier and Contract cannot read RiskFlag, so on
every read surface open_flags is as if it did not exist: never in a value, a schema, a change list,
a lineage, a health report or a resolve candidate, and naming it answers exactly like naming an
Attribute that does not exist. The admin, who reads every Kind, sees it everywhere (the control).
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Stack

D = "/api/v1/domains/supply"
HIDDEN = "open_flags"

# (method, path, body): every read a Supplier-narrowed viewer may make that could carry open_flags.
SURFACES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/schema", None),
    ("GET", "/kinds/Supplier/records/S-1001?links=true&lineage=true", None),
    ("GET", "/kinds/Supplier/records/S-1001/history?values=true", None),
    ("GET", "/kinds/Supplier/records/S-1001/lineage", None),
    ("GET", "/kinds/Supplier/records/S-1001/explain", None),
    ("GET", "/kinds/Supplier/records/S-1001/explain?format=markdown", None),
    ("GET", "/health", None),
    ("GET", "/health?format=markdown", None),
    ("GET", "/kinds/Supplier/health", None),
    ("GET", "/kinds/Supplier/health?format=markdown", None),
    ("GET", "/diff?from={first}&to={head}", None),
    ("POST", "/query", {"kind": "Supplier", "limit": 50}),
    ("POST", "/query", {"kind": "Supplier", "aggregate": {"group_by": "status"}}),
    ("POST", "/query", {"trait": "Located", "limit": 50}),
    ("POST", "/search", {"text": "Kavsen"}),
    ("POST", "/resolve", {"text": "open flags of suppliers"}),
    ("POST", "/resolve", {"text": "open_flags"}),
    ("POST", "/context", {"refs": ["Supplier/S-1001"], "depth": 1, "budget_tokens": 20000}),
    ("POST", "/context", {"refs": ["Supplier/S-1001"], "budget_tokens": 20000, "format": "markdown"}),
    ("POST", "/context", {"query": {"kind": "Supplier"}, "budget_tokens": 20000}),
    ("POST", "/neighborhood", {"refs": ["Supplier/S-1001"], "depth": 1}),
    ("POST", "/traverse", {"from": ["Contract/C-3001"], "path": ["with_supplier"]}),
]

# Requests that name the Attribute: each must answer as the same request naming an unknown one.
NAMING: list[tuple[str, dict[str, Any]]] = [
    ("/query", {"kind": "Supplier", "select": ["legal_name", "{attr}"]}),
    ("/query", {"kind": "Supplier", "where": {"attr": "{attr}", "op": "ge", "value": 1}}),
    ("/query", {"kind": "Supplier", "order_by": ["-{attr}"]}),
    ("/query", {"kind": "Supplier", "aggregate": {"group_by": "{attr}"}}),
    ("/query", {"kind": "Supplier", "where": {"attr": "{attr}", "op": "is_null"}}),
]


async def _flag_s1001(supply: Stack) -> None:
    response = await supply.http.post(
        D + "/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1001", "severity": "high", "reason": "late deliveries"}},
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text


async def _revisions(supply: Stack) -> dict[str, str]:
    """The import (the first Revision of the branch) and the head."""
    history = await supply.http.get(D + "/kinds/Supplier/records/S-1001/history", headers=supply.admin)
    revisions = [change["revision"] for change in history.json()["changes"]]
    return {"first": revisions[-1], "head": revisions[0]}


def _fill(value: Any, attr: str) -> Any:
    if isinstance(value, str):
        return value.replace("{attr}", attr)
    if isinstance(value, list):
        return [_fill(v, attr) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, attr) for k, v in value.items()}
    return value


async def _call(supply: Stack, headers: dict[str, str], method: str, path: str, body: Any) -> Any:
    if method == "GET":
        return await supply.http.get(D + path, headers=headers)
    return await supply.http.post(D + path, json=body, headers=headers)


@pytest.fixture
async def narrowed(supply: Stack) -> dict[str, str]:
    await _flag_s1001(supply)
    headers = await supply.principal("usr_suponly")
    await supply.grant("supply", "usr_suponly", "viewer", kinds=["Supplier", "Contract"])
    return headers


async def test_a_derived_value_over_an_invisible_kind_is_on_no_read_surface(
    supply: Stack, narrowed: dict[str, str]
) -> None:
    revisions = await _revisions(supply)
    leaks, control_misses = [], []
    for method, template, body in SURFACES:
        path = template.format(**revisions)
        seen = await _call(supply, narrowed, method, path, body)
        assert seen.status_code == 200, (method, path, seen.text)
        # resolve echoes the words it was given (unmatched, coverage): only its candidates count.
        shown = str(seen.json()["candidates"]) if path == "/resolve" else seen.text
        if HIDDEN in shown:
            leaks.append(f"{method} {path} {body or ''}")
        control = await _call(supply, supply.admin, method, path, body)
        assert control.status_code == 200, (method, path, control.text)
        if HIDDEN not in control.text:
            control_misses.append(f"{method} {path} {body or ''}")
    assert leaks == [], "\n".join(leaks)
    # Where a caller who may read RiskFlag finds open_flags (so that the check above means something
    # there): everywhere but the health reports (no violation, nothing stale) and a grouping by status.
    assert control_misses == [
        "GET /health ",
        "GET /health?format=markdown ",
        "GET /kinds/Supplier/health ",
        "GET /kinds/Supplier/health?format=markdown ",
        "POST /query {'kind': 'Supplier', 'aggregate': {'group_by': 'status'}}",
    ]


@pytest.mark.parametrize(("path", "template"), NAMING, ids=[str(i) for i in range(len(NAMING))])
async def test_naming_a_derived_value_over_an_invisible_kind_answers_like_an_unknown_attribute(
    supply: Stack, narrowed: dict[str, str], path: str, template: dict[str, Any]
) -> None:
    hidden = await supply.http.post(D + path, json=_fill(template, HIDDEN), headers=narrowed)
    unknown = await supply.http.post(D + path, json=_fill(template, "no_such_attr"), headers=narrowed)
    assert hidden.status_code == unknown.status_code == 422, hidden.text
    # The same issues, the name it was asked for aside (the list of Attributes one may name included).
    echoed = [
        {**issue, "message": issue["message"].replace("'no_such_attr'", f"{HIDDEN!r}")}
        for issue in unknown.json()["issues"]
    ]
    assert hidden.json()["issues"] == echoed
    assert HIDDEN not in hidden.text.replace(f"{HIDDEN!r}", "")
    # The admin may use it.
    allowed = await supply.http.post(D + path, json=_fill(template, HIDDEN), headers=supply.admin)
    assert allowed.status_code == 200, allowed.text


async def test_group_by_a_derived_value_answers_the_admin(supply: Stack) -> None:
    await _flag_s1001(supply)
    body = (
        await supply.http.post(
            D + "/query",
            json={"kind": "Supplier", "aggregate": {"group_by": HIDDEN}},
            headers=supply.admin,
        )
    ).json()
    assert {group["value"] for group in body["aggregate"]["groups"]} == {"0", "1"}


async def test_health_counts_only_derived_values_the_caller_may_know(
    supply: Stack, narrowed: dict[str, str]
) -> None:
    """Missing derived values are counted over the derived Attributes the caller may know: none for a
    viewer who may not read RiskFlag (Supplier has no other derived Attribute)."""
    path = D + "/kinds/Supplier/health"
    admin = (await supply.http.get(path, headers=supply.admin)).json()
    viewer = (await supply.http.get(path, headers=narrowed)).json()
    assert admin["kinds"][0]["derived"] == 0
    assert viewer["kinds"][0]["derived"] is None
