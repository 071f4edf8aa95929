"""History, lineage, explain and diff of Records (seed section 3), on the supply example."""

from __future__ import annotations

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"
S1001 = D + "/kinds/Supplier/records/S-1001"


async def revisions(stack: Stack) -> list[str]:
    from sqlalchemy import text

    async with stack.rt.db.engine.connect() as conn:
        return [row[0] for row in await conn.execute(text("select id from revisions order by generation"))]


async def raise_risk(stack: Stack, key: str, score: int, message: str) -> str:
    response = await stack.http.post(
        D + "/operations/update_supplier/execute",
        json={"parameters": {"key": key, "risk_score": score}, "message": message},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["revision"])


async def test_history_newest_first_with_values_and_paging(supply: Stack) -> None:
    third = await raise_risk(supply, "S-1001", 95, "Third look")
    first, second = (await revisions(supply))[:2]
    response = await supply.http.get(S1001 + "/history?values=true", headers=supply.admin)
    assert response.status_code == 200
    body = response.json()
    assert response.headers["Lorebase-Revision"] == body["revision"] == third
    assert [c["revision"] for c in body["changes"]] == [third, second, first]
    newest, middle, oldest = body["changes"]
    assert newest["change"] == "modified" and newest["attributes"] == ["risk_score"]
    # before and after are symmetric: the changed Attributes, both sides (issue 15 §5).
    assert newest["before"] == {"risk_score": "90"} and newest["after"] == {"risk_score": "95"}
    assert oldest["before"] is None and set(oldest["after"]) == set(oldest["attributes"])
    assert oldest["after"]["legal_name"] == "Kavsen Alloys Sp. z o.o."
    assert newest["author"] == "usr_admin" and newest["message"] == "Third look"
    assert middle["author"] == "usr_editor" and middle["origin"]["type"] == "operation"
    assert oldest["change"] == "created" and oldest["origin"] == {"type": "import", "ref": "examples/supply"}
    assert newest["provenance"]["risk_score"]["revision"] == third
    # pages of one
    seen, cursor = [], ""
    while True:
        page = (
            await supply.http.get(S1001 + f"/history?limit=1&cursor={cursor}", headers=supply.admin)
        ).json()
        seen += [c["revision"] for c in page["changes"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [third, second, first]
    # at an earlier Revision: the history up to it
    earlier = (await supply.http.get(S1001 + f"/history?at={second}", headers=supply.admin)).json()
    assert [c["revision"] for c in earlier["changes"]] == [second, first]


async def test_history_of_a_record_of_another_branch_and_a_deleted_one_keeps_its_history(
    supply: Stack,
) -> None:
    branch = await supply.http.post(D + "/branches", json={"name": "work-1"}, headers=supply.admin)
    assert branch.status_code == 201
    flag = await supply.http.post(
        D + "/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1002", "severity": "low", "reason": "Late"}, "branch": "work-1"},
        headers=supply.admin,
    )
    assert flag.status_code == 200
    on_work = await supply.http.get(
        D + "/kinds/RiskFlag/records/RF-S-1002-low/history?branch=work-1", headers=supply.admin
    )
    assert [c["change"] for c in on_work.json()["changes"]] == ["created"]
    on_main = await supply.http.get(D + "/kinds/RiskFlag/records/RF-S-1002-low/history", headers=supply.admin)
    assert on_main.status_code == 404
    # the Record on work-1 inherits the history of main before the fork
    inherited = await supply.http.get(S1001 + "/history?branch=work-1", headers=supply.admin)
    assert len(inherited.json()["changes"]) == 2


async def test_lineage_names_the_operation_and_the_import(supply: Stack) -> None:
    first, second = await revisions(supply)
    response = await supply.http.get(S1001 + "/lineage", headers=supply.admin)
    assert response.status_code == 200
    body = response.json()
    assert body["changes"] == 2 and body["changes_truncated"] is False
    risk = body["attributes"]["risk_score"]
    assert risk["value"] == "90" and risk["revision"] == second
    assert risk["actor"] == "usr_editor" and risk["message"] == "Raise the risk of S-1001"
    assert risk["operation"]["name"] == "update_supplier"
    assert risk["operation"]["invocation_id"] == risk["origin"]["ref"]
    name = body["attributes"]["legal_name"]
    assert name["revision"] == first and name["import"] == {"source": "examples/supply"}
    earlier = (await supply.http.get(S1001 + f"/lineage?at={first}", headers=supply.admin)).json()
    assert earlier["attributes"]["risk_score"]["value"] == "72"
    assert earlier["attributes"]["risk_score"]["revision"] == first
    assert earlier["changes"] == 1


async def test_explain_json_and_the_seed_markdown(supply: Stack) -> None:
    first, second = await revisions(supply)
    body = (await supply.http.get(S1001 + "/explain", headers=supply.admin)).json()
    assert body["title"] == "Kavsen Alloys Sp. z o.o." and body["changes"] == 2
    assert body["created"]["revision"] == first and body["created"]["author"] == "usr_loader"
    assert {(link["relation"], link["from"]) for link in body["links"]} == {
        ("supplied_by", "Part/P-10028"),
        ("with_supplier", "Contract/C-3001"),
    }
    markdown = await supply.http.get(S1001 + "/explain?format=markdown", headers=supply.admin)
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.headers["Lorebase-Revision"] == second
    text = markdown.text
    lines = text.splitlines()
    assert lines[0] == "# Explain: Supplier/S-1001: Kavsen Alloys Sp. z o.o."
    assert lines[1] == f"supply/main at revision {second}; 2 changes on this branch"
    assert "## Created" in lines
    created = lines[lines.index("## Created") + 1]
    assert created.startswith(f"In {first[:12]} at ")
    assert created.endswith("by usr_loader (import examples/supply): Import the supply example data")
    assert "| attribute | value | last change | at | by | origin | message |" in lines
    risk = next(line for line in lines if line.startswith("| risk_score |"))
    assert risk.startswith(f"| risk_score | 90 | {second[:12]} | ")
    assert risk.endswith("| usr_editor | operation | Raise the risk of S-1001 |")
    again = await supply.http.get(S1001 + "/explain?format=markdown", headers=supply.admin)
    assert again.content == markdown.content, "the same read at the same Revision answers the same bytes"
    cached = await supply.http.get(
        S1001 + "/explain?format=markdown",
        headers={**supply.admin, "If-None-Match": markdown.headers["ETag"]},
    )
    assert cached.status_code == 304


async def test_diff_between_two_revisions(supply: Stack) -> None:
    first, second = await revisions(supply)
    branch = await supply.http.post(D + "/branches", json={"name": "work-2"}, headers=supply.admin)
    assert branch.status_code == 201
    flag = await supply.http.post(
        D + "/operations/flag_supplier_risk/execute",
        json={"parameters": {"supplier": "S-1002", "severity": "high", "reason": "Late"}, "branch": "work-2"},
        headers=supply.admin,
    )
    third = flag.json()["revision"]
    body = (await supply.http.get(D + f"/diff?from={first}&to={second}", headers=supply.admin)).json()
    assert body["records"]["changed"] == [
        {
            "ref": "Supplier/S-1001",
            "attributes": ["risk_score"],
            "before": {"risk_score": "72"},
            "after": {"risk_score": "90"},
        }
    ]
    assert body["records"]["added"] == [] and body["links"] == {"added": [], "removed": [], "changed": []}
    on_work = (
        await supply.http.get(D + f"/diff?from={first}&to={third}&branch=work-2", headers=supply.admin)
    ).json()
    assert [r["ref"] for r in on_work["records"]["added"]] == ["RiskFlag/RF-S-1002-high"]
    assert [r["ref"] for r in on_work["links"]["added"]] == ["flags/RF-S-1002-high->S-1002"]
    # S-1002's derived open_flags counts the new flag
    changed = {r["ref"]: r["after"] for r in on_work["records"]["changed"]}
    assert list(changed) == ["Supplier/S-1001", "Supplier/S-1002"]
    assert changed["Supplier/S-1002"] == {"open_flags": "1"}
    backwards = await supply.http.get(D + f"/diff?from={second}&to={first}", headers=supply.admin)
    assert backwards.status_code == 400
    off_branch = await supply.http.get(D + f"/diff?from={first}&to={third}", headers=supply.admin)
    assert off_branch.status_code == 404


async def test_narrowed_grants_see_no_other_kind_through_history_lineage_explain_or_diff(
    supply: Stack,
) -> None:
    first, second = await revisions(supply)
    viewer = await supply.principal("usr_parts")
    await supply.grant("supply", "usr_parts", "viewer", kinds=["Part"])
    for path in ("/history", "/lineage", "/explain"):
        hidden = await supply.http.get(S1001 + path, headers=viewer)
        unknown = await supply.http.get(D + "/kinds/Gizmo/records/S-1001" + path, headers=viewer)
        assert hidden.status_code == unknown.status_code == 404, path
    explained = (await supply.http.get(D + "/kinds/Part/records/P-10028/explain", headers=viewer)).json()
    assert explained["links"] == [], "Links to Kinds the caller cannot read are left out"
    diffed = (await supply.http.get(D + f"/diff?from={first}&to={second}", headers=viewer)).json()
    assert diffed["records"]["changed"] == []
    secret = await supply.http.get(S1001 + "/lineage", headers={**supply.admin})
    assert "vat_number" in secret.json()["attributes"]
    editor_key = (await supply.http.post("/api/v1/principals/usr_editor/keys", headers=supply.admin)).json()[
        "key"
    ]
    as_editor = (
        await supply.http.get(
            S1001 + "/history?values=true", headers={"Authorization": f"Bearer {editor_key}"}
        )
    ).json()
    assert all("vat_number" not in (c.get("after") or {}) for c in as_editor["changes"]), (
        "no clearance, no value"
    )


async def test_bad_history_and_diff_requests(supply: Stack) -> None:
    first, _ = await revisions(supply)
    for path, status in (
        (S1001 + "/history?limit=100000", 400),
        (S1001 + "/history?cursor=@@", 400),
        (D + "/kinds/Supplier/records/S-0000/history", 404),
        (S1001 + "/explain?format=pdf", 400),
        (S1001 + "/lineage?at=no%20pe", 400),
        (S1001 + "/lineage?at=nope", 404),  # a name, but neither a Revision nor a tag
        (D + f"/diff?from={first}", 400),
        (D + "/diff?from=z%20z&to=z%20z", 400),
    ):
        response = await supply.http.get(path, headers=supply.admin)
        assert response.status_code == status, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
