"""Data health (seed section 6): JSON and Markdown, on a sound and on a damaged copy of the example."""

from __future__ import annotations

from sqlalchemy import text

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"


async def test_the_example_is_sound(supply: Stack) -> None:
    response = await supply.http.get(D + "/health", headers=supply.admin)
    assert response.status_code == 200
    body = response.json()
    assert body["summary"] == {
        "ok": True,
        "kinds": 6,
        "records": 184,
        "links": 289,
        "invalid_records": 0,
        "orphan_links": 0,
        "required_gaps": 0,
        "duplicate_groups": 0,
        "stale_derived_kinds": 0,
    }
    assert response.headers["Lorebase-Revision"] == body["revision"]
    supplier = next(k for k in body["kinds"] if k["kind"] == "Supplier")
    assert supplier["records"] == 30 and supplier["last_change"] == body["revision"]
    markdown = await supply.http.get(D + "/health?format=markdown", headers=supply.admin)
    lines = markdown.text.splitlines()
    assert lines[0] == "# Health of supply on main"
    assert lines[1] == f"revision {body['revision'][:12]}"
    assert lines[3] == "ok: 6 kinds, 184 records, 289 links"
    assert "| kind | records | invalid | duplicate groups | derived | last change |" in lines
    assert "| relation | ends | links | orphans | gaps | side |" in lines
    assert "| for_part | PurchaseOrder -> Part | 50 | 0 | 0 |  |" in lines


async def test_a_damaged_copy_reports_each_problem(supply: Stack) -> None:
    async with supply.rt.db.engine.begin() as conn:
        await conn.execute(
            text(
                """update records set "values" = jsonb_set("values", '{country}', '"Poland"') where key = 'S-1003'"""
            )
        )
        await conn.execute(
            text("""update records set "values" = "values" - 'legal_name' where key = 'S-1004'""")
        )
        vat = await conn.scalar(text("""select "values"->>'vat_number' from records where key = 'S-1002'"""))
        await conn.execute(
            text(
                """update records set "values" = jsonb_set("values", '{vat_number}', to_jsonb(lower(cast(:v as text)))) where key = 'S-1006'"""
            ),
            {"v": vat},
        )
        await conn.execute(text("delete from records where kind = 'Plant' and key = 'PL-01'"))
        await conn.execute(text("delete from links where relation = 'for_part' and from_key = 'PO-200001'"))
        orphans = await conn.scalar(
            text("select count(*) from links where relation = 'stocked_at' and to_key = 'PL-01'")
        )
    supply.rt.read_cache.forget()  # the damage bypassed commits, so the head Revision did not move
    body = (await supply.http.get(D + "/health", headers=supply.admin)).json()
    summary = body["summary"]
    assert summary["ok"] is False
    assert summary["invalid_records"] == 2
    assert summary["orphan_links"] == orphans > 0
    assert summary["required_gaps"] == 1
    supplier = next(k for k in body["kinds"] if k["kind"] == "Supplier")
    assert {(v["rule"], v["attribute"], tuple(v["examples"])) for v in supplier["violations"]} == {
        ("value.pattern", "country", ("S-1003",)),
        ("value.required", "legal_name", ("S-1004",)),
    }
    assert supplier["duplicates"] == [
        {"attribute": "vat_number", "reason": "unique", "records": 2, "keys": ["S-1002", "S-1006"]}
    ]
    markdown = (await supply.http.get(D + "/health?format=markdown", headers=supply.admin)).text
    assert "needs attention: 6 kinds" in markdown
    assert "### Supplier: violations (30 of 30 Records checked)" in markdown
    assert "- value.pattern on country: 1 (e.g. S-1003)" in markdown
    assert "- value.required on legal_name: 1 (e.g. S-1004)" in markdown
    assert "### Supplier: duplicates (1 groups)" in markdown
    assert "- vat_number [unique]: S-1002, S-1006 (2)" in markdown
    assert vat not in markdown, "values of sensitive Attributes are not printed"
    assert "- for_part required, missing for: PO-200001" in markdown
    assert "- stocked_at orphans: " in markdown and "->PL-01" in markdown
    kind = await supply.http.get(D + "/kinds/Supplier/health", headers=supply.admin)
    assert [k["kind"] for k in kind.json()["kinds"]] == ["Supplier"]
    assert {r["relation"] for r in kind.json()["relations"]} == {"supplied_by", "with_supplier", "flags"}


async def test_health_at_an_earlier_revision_and_narrowed_grants(supply: Stack) -> None:
    async with supply.rt.db.engine.connect() as conn:
        first = await conn.scalar(text("select id from revisions order by generation limit 1"))
    earlier = (await supply.http.get(D + f"/health?at={first}", headers=supply.admin)).json()
    assert earlier["revision"] == first and earlier["summary"]["records"] == 184
    viewer = await supply.principal("usr_buyer")
    await supply.grant("supply", "usr_buyer", "viewer", kinds=["Supplier", "Contract"])
    narrowed = (await supply.http.get(D + "/health", headers=viewer)).json()
    assert [k["kind"] for k in narrowed["kinds"]] == ["Contract", "Supplier"]
    assert [r["relation"] for r in narrowed["relations"]] == ["with_supplier"]
    contracts = narrowed["kinds"][0]["records"]
    assert narrowed["summary"]["records"] == 30 + contracts
    hidden = await supply.http.get(D + "/kinds/Part/health", headers=viewer)
    assert hidden.status_code == 404
    bad = await supply.http.get(D + "/health?format=xml", headers=viewer)
    assert bad.status_code == 400
