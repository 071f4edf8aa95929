"""POST /search: lexical search by Kind, Trait or lens, ranked and stable; never over hidden values."""

from __future__ import annotations

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply/search"


async def test_search_by_words_misspellings_and_kinds(supply: Stack) -> None:
    response = await supply.http.post(D, json={"text": "shaft seal"}, headers=supply.admin)
    assert response.status_code == 200, response.text
    body = response.json()
    assert response.headers["Lorebase-Revision"] == body["revision"]
    assert body["results"][0]["ref"] == "Part/P-10028"
    assert body["results"][0]["title"] == "Radial shaft seal 25x42x7"
    scores = [r["score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True)
    again = await supply.http.post(D, json={"text": "shaft seal"}, headers=supply.admin)
    assert again.content == response.content, "ranked and stable"
    typo = (await supply.http.post(D, json={"text": "Kavsen Aloys"}, headers=supply.admin)).json()
    assert "Supplier/S-1001" in [r["ref"] for r in typo["results"]], "similar spelling matches"
    contracts = (
        await supply.http.post(D, json={"text": "Kavsen", "kinds": ["Contract"]}, headers=supply.admin)
    ).json()
    assert contracts["kinds"] == ["Contract"] and all(r["kind"] == "Contract" for r in contracts["results"])
    assert "Contract/C-3001" in [r["ref"] for r in contracts["results"]]


async def test_traits_lens_and_union(supply: Stack) -> None:
    located = (
        await supply.http.post(D, json={"text": "Poznan", "traits": ["Located"]}, headers=supply.admin)
    ).json()
    assert located["kinds"] == ["Supplier", "Plant"]
    assert all(r["kind"] in ("Supplier", "Plant") for r in located["results"]) and located["results"]
    union = (
        await supply.http.post(
            D, json={"text": "Poznan", "kinds": ["Contract"], "traits": ["Located"]}, headers=supply.admin
        )
    ).json()
    assert set(union["kinds"]) == {"Supplier", "Contract", "Plant"}
    lens = (
        await supply.http.post(D, json={"text": "Kavsen", "lens": "supplier_risk"}, headers=supply.admin)
    ).json()
    assert set(lens["kinds"]) == {"Supplier", "Contract", "Part", "RiskFlag"}
    named = (
        await supply.http.post(
            D, json={"text": "Kavsen", "lens": "supplier_risk", "kinds": ["Plant"]}, headers=supply.admin
        )
    ).json()
    assert named["kinds"] == ["Plant"], "a lens supplies the Kinds only when the request names none"


async def test_search_never_reads_what_the_caller_may_not(supply: Stack) -> None:
    vat = (
        await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1001", headers=supply.admin)
    ).json()["values"]["vat_number"]
    assert (await supply.http.post(D, json={"text": vat}, headers=supply.admin)).json()["results"] == [], (
        "sensitive values are not searched"
    )
    viewer = await supply.principal("usr_partsonly")
    await supply.grant("supply", "usr_partsonly", "viewer", kinds=["Part"])
    hidden = (await supply.http.post(D, json={"text": "Kavsen"}, headers=viewer)).json()
    assert hidden["kinds"] == ["Part"] and all(r["kind"] == "Part" for r in hidden["results"])
    for payload, status in (
        ({"text": "Kavsen", "kinds": ["Supplier"]}, 404),
        ({"text": "x", "traits": ["Located"]}, 422),
        ({"text": "x", "lens": "nope"}, 422),
        ({"text": ""}, 422),
        ({"text": "x", "limit": 0}, 422),
        ({"text": "x", "query_vector": [0, 0]}, 422),
        ({"text": "x", "colour": "red"}, 422),
    ):
        response = await supply.http.post(D, json=payload, headers=viewer)
        assert response.status_code == status, (payload, response.text)


async def test_search_on_an_overlay_branch_reads_its_snapshot(supply: Stack) -> None:
    created = await supply.http.post(
        "/api/v1/domains/supply/branches",
        json={"name": "look", "from": "main", "mode": "overlay"},
        headers=supply.admin,
    )
    assert created.status_code == 201, created.text
    on_main = (await supply.http.post(D, json={"text": "shaft seal"}, headers=supply.admin)).json()
    on_overlay = (
        await supply.http.post(D, json={"text": "shaft seal", "branch": "look"}, headers=supply.admin)
    ).json()
    assert on_overlay["branch"] == "look" and on_main["results"]
    assert on_overlay["results"] == on_main["results"], "the same Records, scored the same way"
    flagged = await supply.http.post(
        "/api/v1/domains/supply/operations/flag_supplier_risk/execute",
        json={
            "parameters": {"supplier": "S-1001", "severity": "high", "reason": "Corroded flange batch"},
            "branch": "look",
        },
        headers=supply.admin,
    )
    assert flagged.status_code == 200, flagged.text
    found = (
        await supply.http.post(D, json={"text": "corroded flange", "branch": "look"}, headers=supply.admin)
    ).json()
    assert [r["ref"] for r in found["results"]] == ["RiskFlag/RF-S-1001-high"]
    elsewhere = (await supply.http.post(D, json={"text": "corroded flange"}, headers=supply.admin)).json()
    assert elsewhere["results"] == []
