"""Extraction provenance (issue 15 §1): evidence written with an import, stored once, shown by
lineage, explain (JSON and Markdown), history, context pack lineage, and kept through a merge."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from lorebase.contract.answers.records import Explanation, HistoryPage, LineageView
from tests.integration.conftest import Stack
from tests.integration.test_proposals import approve, branch, propose, reviewer, update

D = "/api/v1/domains/supply"
S1001 = D + "/kinds/Supplier/records/S-1001"
DIGEST = "sha256:" + hashlib.sha256(b"audit report Q3").hexdigest()


def evidence(quote: str, **extra: Any) -> dict[str, Any]:
    return {
        "document": "s3://audits/2026-q3/kavsen.pdf",
        "document_digest": DIGEST,
        "span": {"start": 120, "end": 120 + len(quote), "quote": quote},
        "model": "gpt-x-2026-09",
        "prompt_version": "supplier-risk/v3",
        "extractor": "lorebase-extract 1.4",
        "confidence": 0.82,
        **extra,
    }


async def extract(stack: Stack, body: dict[str, Any], branch_name: str = "main") -> dict[str, Any]:
    response = await stack.http.post(
        D + "/imports", json={"source": "audit-q3", "branch": branch_name, **body}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


BATCH = {
    "extraction": evidence("risk is high"),
    "records": [
        {
            "kind": "Supplier",
            "values": {"supplier_code": "S-1001", "risk_score": "80", "city": "Posen"},
            "evidence": {"city": evidence("located in Posen", confidence=0.4)},
        },
        {"kind": "Supplier", "values": {"supplier_code": "S-1002", "risk_score": "60"}},
    ],
}


async def test_extracted_values_show_their_evidence_everywhere(supply: Stack) -> None:
    done = await extract(supply, BATCH)
    revision = done["revision"]
    # The fourth origin; two distinct pieces of evidence, each stored once for three values.
    lineage = (await supply.http.get(S1001 + "/lineage", headers=supply.admin)).json()
    msgspec.convert(lineage, LineageView)
    risk, city = lineage["attributes"]["risk_score"], lineage["attributes"]["city"]
    assert risk["origin"] == {"type": "extraction", "ref": "audit-q3"} and risk["revision"] == revision
    assert risk["extraction"]["span"]["quote"] == "risk is high" and risk["extraction"]["confidence"] == 0.82
    assert city["extraction"]["span"] == {"start": 120, "end": 136, "quote": "located in Posen"}
    assert city["extraction"]["confidence"] == 0.4 and city["extraction"]["model"] == "gpt-x-2026-09"
    assert "extraction" not in lineage["attributes"]["legal_name"]  # imported, not extracted
    assert await supply.count("extractions") == 2
    other = (await supply.http.get(D + "/kinds/Supplier/records/S-1002/lineage", headers=supply.admin)).json()
    assert other["attributes"]["risk_score"]["extraction"]["id"] == risk["extraction"]["id"]
    # Explain, JSON and Markdown.
    explained = (await supply.http.get(S1001 + "/explain", headers=supply.admin)).json()
    msgspec.convert(explained, Explanation)
    by_name = {a["name"]: a for a in explained["attributes"]}
    assert by_name["city"]["extraction"] == city["extraction"]
    markdown = (await supply.http.get(S1001 + "/explain?format=markdown", headers=supply.admin)).text
    assert "## Extraction evidence" in markdown
    assert "- city: s3://audits/2026-q3/kavsen.pdf (sha256:" in markdown and '"located in Posen"' in markdown
    assert (
        "model gpt-x-2026-09, prompt supplier-risk/v3, extractor lorebase-extract 1.4, confidence 0.4"
        in markdown
    )
    # History: the change names the evidence of each extracted value.
    history = (await supply.http.get(S1001 + "/history?values=true", headers=supply.admin)).json()
    msgspec.convert(history, HistoryPage)
    newest = history["changes"][0]
    assert newest["origin"]["type"] == "extraction"
    assert newest["provenance"]["city"]["extraction"]["id"] == city["extraction"]["id"]
    assert newest["provenance"]["risk_score"]["extraction"]["span"]["quote"] == "risk is high"
    # The context pack's lineage, JSON and Markdown.
    pack = (
        await supply.http.post(
            D + "/context", json={"refs": ["Supplier/S-1001"], "include_lineage": True}, headers=supply.admin
        )
    ).json()
    [group] = [g for g in pack["lineage"] if g["revision"] == revision]
    assert set(group["extractions"]) == {"city", "risk_score"}
    text = (
        await supply.http.post(
            D + "/context",
            json={"refs": ["Supplier/S-1001"], "include_lineage": True, "format": "markdown"},
            headers=supply.admin,
        )
    ).text
    assert "city extracted from s3://audits/2026-q3/kavsen.pdf" in text
    # A later change of a value drops its evidence; the other extracted value keeps its own.
    await update(supply, "S-1001", "main", risk_score=70)
    after = (await supply.http.get(S1001 + "/lineage", headers=supply.admin)).json()["attributes"]
    assert after["risk_score"]["origin"]["type"] == "operation" and "extraction" not in after["risk_score"]
    assert after["city"]["extraction"]["id"] == city["extraction"]["id"]
    # The same evidence again is not stored again.
    again = {"records": [{"kind": "Supplier", "values": {"supplier_code": "S-1003", "risk_score": "61"}}]}
    await extract(supply, {**again, "extraction": evidence("risk is high")})
    assert await supply.count("extractions") == 2


async def test_a_merge_keeps_the_evidence_of_extracted_values(supply: Stack) -> None:
    await branch(supply, "extracted")
    await extract(supply, BATCH, "extracted")
    await update(supply, "S-1010", "main", risk_score=5)  # main moves: a three-way merge
    proposal = await propose(supply, "extracted")
    await approve(supply, proposal["id"], await reviewer(supply))
    merged = await supply.http.post(f"{D}/proposals/{proposal['id']}/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["attempt"]["result"] == "merge", merged.text
    lineage = (await supply.http.get(S1001 + "/lineage", headers=supply.admin)).json()["attributes"]
    assert lineage["city"]["extraction"]["span"]["quote"] == "located in Posen"
    assert lineage["city"]["brought_by"] == merged.json()["merged_revision"]


async def test_bad_evidence_is_422_saying_what_to_change_and_stores_nothing(supply: Stack) -> None:
    revisions, extractions = await supply.count("revisions"), await supply.count("extractions")
    record = {"kind": "Supplier", "values": {"supplier_code": "S-1001", "city": "Posen"}}
    for bad, path, words in (
        ({"extraction": evidence("x", span={})}, "extraction.span", "start and end"),
        ({"extraction": evidence("x", span={"start": 9})}, "extraction.span", "together"),
        ({"extraction": evidence("x", span={"start": 9, "end": 2})}, "extraction.span", "after end"),
        ({"extraction": evidence("x", confidence=1.5)}, "extraction.confidence", ""),
        ({"extraction": evidence("x", document_digest="md5:abc")}, "extraction.document_digest", ""),
        ({"extraction": {**evidence("x"), "model": ""}}, "extraction.model", ""),
        ({"extraction": {**evidence("x"), "page": 3}}, "extraction", "page"),
    ):
        response = await supply.http.post(
            D + "/imports", json={"records": [record], **bad}, headers=supply.admin
        )
        assert response.status_code == 422, (bad, response.text)
        issue = response.json()["issues"][0]
        assert issue["path"].startswith(path), (issue, path)
        assert words in issue["message"] or words in response.json()["detail"], response.text
    unset = {**record, "evidence": {"risk_score": evidence("risk")}}
    response = await supply.http.post(D + "/imports", json={"records": [unset]}, headers=supply.admin)
    assert response.status_code == 422
    issue = response.json()["issues"][0]
    assert issue["path"] == "records[0].evidence.risk_score" and "does not set" in issue["message"]
    assert (await supply.count("revisions"), await supply.count("extractions")) == (revisions, extractions)


async def test_an_operation_may_carry_the_evidence_of_the_values_it_sets(supply: Stack) -> None:
    execute = D + "/operations/update_supplier/execute"
    body = {"parameters": {"key": "S-1001", "risk_score": 64}, "extraction": evidence("risk 64")}
    done = await supply.http.post(execute, json=body, headers=supply.admin)
    assert done.status_code == 200, done.text
    lineage = (await supply.http.get(S1001 + "/lineage", headers=supply.admin)).json()["attributes"]
    risk = lineage["risk_score"]
    assert risk["origin"]["type"] == "operation" and risk["operation"]["name"] == "update_supplier"
    assert risk["extraction"]["span"]["quote"] == "risk 64"
    assert "extraction" not in lineage["city"]
    bad = await supply.http.post(
        execute, json={**body, "extraction": evidence("x", span={"quote": None})}, headers=supply.admin
    )
    assert bad.status_code == 422 and bad.json()["issues"][0]["path"] == "extraction.span", bad.text


async def test_a_source_sync_may_carry_evidence_and_keeps_its_origin(stack: Stack) -> None:
    from tests.integration.test_sources import shop, sync

    await shop(stack)
    record = {"kind": "Product", "values": {"sku": "P-1", "name": "Seal"}, "extraction": evidence("Seal")}
    done = await sync(stack, {"records": [record]})
    assert done.status_code == 200, done.text
    lineage = (
        await stack.http.get("/api/v1/domains/shop/kinds/Product/records/P-1/lineage", headers=stack.admin)
    ).json()["attributes"]["name"]
    assert lineage["origin"]["type"] == "source_sync" and lineage["source"]["name"] == "erp_products"
    assert lineage["extraction"]["span"]["quote"] == "Seal"
