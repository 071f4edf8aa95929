"""POST /context: seeds, neighbours, links, schema, recent changes, lineage, budget and trimming, lenses."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from lorebase_keeper.context import pack as context
from lorebase_keeper.context import sections as context_sections

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply/context"


async def test_the_seed_example_pack(supply: Stack) -> None:
    response = await supply.http.post(
        D,
        json={"refs": ["Supplier/S-1001"], "depth": 1, "budget_tokens": 20000, "format": "json"},
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text
    pack = response.json()
    assert pack["domain"] == "supply" and pack["branch"] == "main"
    assert response.headers["Lorebase-Revision"] == pack["revision"]
    assert response.headers["ETag"] == pack["etag"] and pack["etag"].startswith(f'"{pack["revision"]}.')
    seed = pack["seeds"][0]
    assert seed["ref"] == "Supplier/S-1001" and seed["title"] == "Kavsen Alloys Sp. z o.o."
    assert seed["values"]["risk_score"] == "90" and seed["updated_revision"] == pack["revision"]
    assert [(n["ref"], n["depth"]) for n in pack["neighbors"]] == [
        ("Contract/C-3001", 1),
        ("Part/P-10028", 1),
    ]
    assert pack["links"]["supplied_by"] == [
        {
            "from": "Part/P-10028",
            "to": "Supplier/S-1001",
            "values": {"is_primary": True, "lead_time_days": "21"},
        }
    ]
    assert pack["links"]["with_supplier"] == [{"from": "Contract/C-3001", "to": "Supplier/S-1001"}]
    supplier = next(k for k in pack["schema"]["kinds"] if k["name"] == "Supplier")
    assert supplier["description"] == "A company that supplies parts to Corvane Industries."
    assert supplier["key"] == ["supplier_code"] and supplier["title"] == "legal_name"
    risk = next(a for a in supplier["attributes"] if a["name"] == "risk_score")
    assert risk["type"] == "integer" and risk["description"].startswith("Supplier risk score from 0")
    relation = next(r for r in pack["schema"]["relations"] if r["name"] == "supplied_by")
    assert relation == {
        "name": "supplied_by",
        "inverse": "supplies",
        "from": "Part",
        "to": "Supplier",
        "cardinality": "many_to_many",
        "description": "A supplier can supply the part.",
    }
    newest = pack["recent_changes"][0]
    assert (
        newest["ref"] == "Supplier/S-1001"
        and newest["change"] == "modified"
        and newest["attributes"] == ["risk_score"]
    )
    assert (
        newest["actor"] == "usr_editor"
        and newest["origin"] == "operation"
        and newest["message"] == "Raise the risk of S-1001"
    )
    assert pack["lineage"][0]["attributes"] == ["risk_score"] and pack["lineage"][0]["origin"] == "operation"
    budget = pack["budget"]
    assert budget["limit_tokens"] == 20000 and budget["chars_per_token"] == 4.0
    assert set(budget["sections"]) == {"seeds", "neighbors", "links", "schema", "recent_changes", "lineage"}
    assert budget["used_tokens"] == sum(budget["sections"].values())
    import orjson

    assert budget["sections"]["links"] == math.ceil(len(orjson.dumps(pack["links"])) / 4.0)
    assert (
        budget["trimmed"] == []
        and budget["omitted"] == {}
        and budget["over_budget"] is False
        and budget["capped"] is False
    )


async def test_same_request_same_bytes_and_304(supply: Stack) -> None:
    request = {"refs": ["Supplier/S-1001"], "format": "markdown"}
    first = await supply.http.post(D, json=request, headers=supply.admin)
    second = await supply.http.post(D, json=request, headers=supply.admin)
    assert first.content == second.content
    cached = await supply.http.post(
        D, json=request, headers={**supply.admin, "If-None-Match": first.headers["ETag"]}
    )
    assert cached.status_code == 304
    await supply.http.post(
        "/api/v1/domains/supply/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1001", "risk_score": 91}},
        headers=supply.admin,
    )
    fresh = await supply.http.post(
        D, json=request, headers={**supply.admin, "If-None-Match": first.headers["ETag"]}
    )
    assert fresh.status_code == 200 and "- risk_score: 91" in fresh.text, "a commit never serves a stale pack"


async def test_markdown_layout(supply: Stack) -> None:
    response = await supply.http.post(
        D, json={"refs": ["Supplier/S-1001"], "depth": 1, "format": "markdown"}, headers=supply.admin
    )
    assert response.headers["content-type"].startswith("text/markdown")
    lines = response.text.splitlines()
    revision = response.headers["Lorebase-Revision"]
    assert lines[0] == "# Context: supply/main"
    assert lines[1].startswith(f"revision {revision}; estimated ") and " of 4000 tokens" in lines[1]
    assert "## Records" in lines and "### Supplier/S-1001: Kavsen Alloys Sp. z o.o." in lines
    assert "- risk_score: 90" in lines and f"- (last changed in {revision[:12]})" in lines
    assert "| ref | title | depth | values |" in lines
    part = next(line for line in lines if line.startswith("| Part/P-10028 |"))
    assert part.startswith(
        "| Part/P-10028 | Radial shaft seal 25x42x7 | 1 | part_number=P-10028; name=Radial shaft seal 25x42x7;"
    )
    assert "### supplied_by (Part -> Supplier)" in lines
    assert "- Part/P-10028 -> Supplier/S-1001 (is_primary=true; lead_time_days=21)" in lines
    assert "### Kind Supplier" in lines and "key: supplier_code; title: legal_name" in lines
    assert any(line.startswith("- risk_score (integer): Supplier risk score from 0 (safe)") for line in lines)


async def test_trimming_in_order_and_seeds_never_trimmed(supply: Stack) -> None:
    big = (
        await supply.http.post(
            D, json={"refs": ["Supplier/S-1002"], "depth": 2, "budget_tokens": 32000}, headers=supply.admin
        )
    ).json()
    full = big["budget"]["used_tokens"]
    small = (
        await supply.http.post(
            D,
            json={"refs": ["Supplier/S-1002"], "depth": 2, "budget_tokens": full // 2},
            headers=supply.admin,
        )
    ).json()
    budget = small["budget"]
    assert budget["used_tokens"] <= full // 2 and budget["over_budget"] is False
    order = [
        "lineage",
        "recent_changes",
        "far_neighbor_values",
        "far_neighbors",
        "schema_descriptions",
        "near_neighbor_values",
        "near_neighbors",
        "schema",
    ]
    assert budget["trimmed"] == [step for step in order if step in budget["trimmed"]], (
        "steps run in trim_order"
    )
    assert budget["trimmed"][0] == "lineage" or "lineage" not in budget["omitted"]
    tiny = (
        await supply.http.post(
            D, json={"refs": ["Supplier/S-1002"], "budget_tokens": 10}, headers=supply.admin
        )
    ).json()
    assert tiny["budget"]["over_budget"] is True
    assert tiny["seeds"][0]["values"], "seed Records are never trimmed"
    assert tiny["neighbors"] == [] and tiny["links"] == {}


async def test_lens_traits_caps_and_precedence(supply: Stack) -> None:
    lens = (
        await supply.http.post(
            D, json={"lens": "supplier_risk", "refs": ["Supplier/S-1001"]}, headers=supply.admin
        )
    ).json()
    assert {n["ref"].split("/")[0] for n in lens["neighbors"]} <= {"Supplier", "Contract", "Part", "RiskFlag"}
    assert set(lens["links"]) <= {"with_supplier", "supplied_by", "flags"}
    located = (
        await supply.http.post(
            D, json={"traits": ["Located"], "search": "Poznan", "depth": 0}, headers=supply.admin
        )
    ).json()
    assert located["seeds"] and all(s["ref"].split("/")[0] in ("Supplier", "Plant") for s in located["seeds"])
    capped = (
        await supply.http.post(
            D, json={"refs": ["Supplier/S-1001"], "depth": 9, "budget_tokens": 10**6}, headers=supply.admin
        )
    ).json()
    assert capped["budget"]["capped"] is True and capped["budget"]["limit_tokens"] == 32000
    seeds_only = (
        await supply.http.post(
            D, json={"lens": "supplier_risk", "refs": ["Supplier/S-1001"], "depth": 0}, headers=supply.admin
        )
    ).json()
    assert seeds_only["neighbors"] == [], "a request member wins over the lens's"
    no_schema = (
        await supply.http.post(
            D, json={"refs": ["Supplier/S-1001"], "include_schema": False}, headers=supply.admin
        )
    ).json()
    assert "schema" not in no_schema and "schema" not in no_schema["budget"]["sections"]
    query = (
        await supply.http.post(
            D,
            json={
                "query": {"kind": "Supplier", "where": {"attr": "risk_score", "op": "ge", "value": 90}},
                "depth": 0,
            },
            headers=supply.admin,
        )
    ).json()
    assert "Supplier/S-1001" in [s["ref"] for s in query["seeds"]]


async def test_a_lens_is_not_a_permission(supply: Stack) -> None:
    viewer = await supply.principal("usr_lens")
    await supply.grant("supply", "usr_lens", "viewer", kinds=["Part"])
    unknown = await supply.http.post(
        D, json={"lens": "supplier_risk", "refs": ["Part/P-10028"]}, headers=viewer
    )
    assert unknown.status_code == 200, "the lens keeps its readable Kind (Part)"
    pack = unknown.json()
    assert all(n["ref"].startswith("Part/") for n in pack["neighbors"]) and pack["links"] == {}
    assert [k["name"] for k in pack["schema"]["kinds"]] == ["Part"]
    assert "Supplier" not in str(pack)
    hidden = await supply.principal("usr_plants")
    await supply.grant("supply", "usr_plants", "viewer", kinds=["Plant"])
    refused = await supply.http.post(
        D, json={"lens": "supplier_risk", "refs": ["Plant/PL-01"]}, headers=hidden
    )
    assert refused.status_code == 422 and refused.json()["type"].endswith("/lens_unknown")


async def test_bad_context_requests(supply: Stack) -> None:
    for body, status in (
        ({}, 422),
        ({"refs": ["Supplier/S-1001"], "search": "x"}, 422),
        ({"refs": ["Supplier/S-9999"]}, 404),
        ({"refs": ["Gizmo/1"]}, 404),
        ({"refs": ["Supplier/S-1001"], "lens": "nope"}, 422),
        ({"refs": ["Supplier/S-1001"], "traits": ["Nope"]}, 422),
        ({"refs": ["Supplier/S-1001"], "relations": ["married_to"]}, 422),
        ({"refs": ["Supplier/S-1001"], "budget_tokens": -5}, 422),
        ({"refs": ["Supplier/S-1001"], "depth": "deep"}, 422),
        ({"refs": ["Supplier/S-1001"], "format": "pdf"}, 422),
        ({"refs": ["Supplier/S-1001"], "since": "no pe"}, 422),  # not a name: the body's pattern
        ({"refs": ["Supplier/S-1001"], "since": "nope"}, 404),  # neither a Revision nor a tag
        ({"query": {"kind": "Supplier", "colour": 1}}, 422),
        ({"search": "   "}, 422),
    ):
        response = await supply.http.post(D, json=body, headers=supply.admin)
        assert response.status_code == status, (body, response.text)
        assert response.headers["content-type"] == "application/problem+json"


async def test_skipping_what_the_budget_would_trim_changes_nothing(
    supply: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pack over budget even without its history sections does not read its recent changes, nor
    # its far neighbours' values when it is so even without those (context.budget.trimmed_whole):
    # every budget and format answers exactly as when it reads them.
    for module in (context, context_sections):  # fewer than the example's Records near S-1001
        monkeypatch.setattr(module, "recent_changes_max", lambda domain: 3)
    reads = 0
    original = context.recent_changes

    async def counted(*args: Any) -> Any:
        nonlocal reads
        reads += 1
        return await original(*args)

    monkeypatch.setattr(context, "recent_changes", counted)

    probes = 0
    original_far = context_sections.far_values

    async def far(*args: Any, whole: bool) -> Any:
        nonlocal probes
        shown = await original_far(*args, whole=whole)
        probes += shown.values is None
        return shown

    monkeypatch.setattr(context, "far_values", far)

    async def packs() -> list[bytes]:
        supply.rt.read_cache.forget()
        answers = []
        # Through every Relation the far neighbours include Plants, whose titles stay (their values
        # are read); through these two they are PurchaseOrders only, counted, not read, when trimmed.
        for relations in (None, ["supplies", "purchase_orders"]):
            for tokens in (60, 150, 300, 600, 1500, 20000):
                for format_ in ("json", "markdown"):
                    body = {
                        "refs": ["Supplier/S-1001"],
                        "depth": 2,
                        "budget_tokens": tokens,
                        "format": format_,
                    }
                    if relations:
                        body["relations"] = relations
                    response = await supply.http.post(D, json=body, headers=supply.admin)
                    assert response.status_code == 200, response.text
                    answers.append(response.content)
        return answers

    skipping = await packs()
    assert 0 < reads < len(skipping), "tight budgets skipped the read, loose ones did not"
    assert 0 < probes < len(skipping) // 2, "tight budgets counted the far neighbours, loose ones read them"
    monkeypatch.setattr(context, "trimmed_whole", lambda *args: False)
    assert await packs() == skipping
    tight = orjson.loads(skipping[0])["budget"]
    assert tight["omitted"]["recent_changes"] == 3 and "recent_changes" in tight["trimmed"]
