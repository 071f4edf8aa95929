"""The eight classes of words resolve grounds since issue 16, on the supply example: codes and
function words, Relations and Link Attributes, partial Attribute names, comparisons, Record names
and keys, typos, coverage noise and intent hints."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.integration.conftest import Stack

R = "/api/v1/domains/supply/resolve"


async def resolve(
    stack: Stack, words: str, headers: dict[str, str] | None = None, **body: Any
) -> dict[str, Any]:
    response = await stack.http.post(
        R, json={"text": words, "record_misses": False, **body}, headers=headers or stack.admin
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def named(body: dict[str, Any], target: str, **members: Any) -> list[dict[str, Any]]:
    return [
        c
        for c in body["candidates"]
        if c["target"] == target and all(c.get(k) == v for k, v in members.items())
    ]


async def test_codes_match_as_written_and_function_words_never_ground(supply: Stack) -> None:
    body = await resolve(supply, "which suppliers in India are at it, no matter what")
    assert not [c for c in body["candidates"] if c["matched"] in {"in", "at", "it", "no"}]
    assert {"in", "at", "it", "no"} <= set(body["unmatched"])
    # written as a code, IN is India's code; the word "in" is not
    coded = await resolve(supply, "suppliers in IN")
    country = named(coded, "value", attribute="country", kind="Supplier")
    assert [c["predicate"] for c in country] == [{"attr": "country", "op": "eq", "value": "IN"}]
    assert country[0]["matched"] == "in" and coded["unmatched"] == ["in"]
    lower = await resolve(supply, "suppliers in pl")
    assert not named(lower, "value", attribute="country"), "pl is not written as the code PL"
    # the schema's `value_aliases: {NO: [Norway]}`: NO is Norway's code, not YAML 1.1's false
    norway = await resolve(supply, "suppliers in Norway")
    country = named(norway, "value", attribute="country", kind="Supplier")
    assert [c["predicate"] for c in country] == [{"attr": "country", "op": "eq", "value": "NO"}]


async def test_relations_and_link_attributes_are_in_the_vocabulary(supply: Stack) -> None:
    body = await resolve(supply, "lead time of parts supplied by vendors and stocked at plants")
    lead = named(body, "attribute", attribute="lead_time_days")
    assert (
        lead
        and lead[0]["relation"] == "supplied_by"
        and lead[0]["kind"] == "Part"
        and lead[0]["to"] == "Supplier"
    )
    relations = {c["relation"] for c in named(body, "relation")}
    assert {"supplied_by", "stocked_at"} <= relations
    assert not {"lead", "time", "supplied", "stocked"} & set(body["coverage"]["unknown"])
    inverse = await resolve(supply, "which parts does Kavsen Alloys supply")
    supplies = named(inverse, "relation", relation="supplied_by")
    assert supplies and supplies[0]["inverse"] == "supplies" and supplies[0]["matched"] == "supply"
    quantity = named(await resolve(supply, "quantity on hand"), "attribute", attribute="quantity")
    assert {c.get("relation") for c in quantity} == {None, "stocked_at"}, "PurchaseOrder's and the Link's"


async def test_a_word_of_an_attribute_name_is_a_candidate_ranked_by_how_much_it_covers(supply: Stack) -> None:
    body = await resolve(supply, "risk")
    assert named(body, "kind", kind="RiskFlag", level="synonym")
    risk = named(body, "attribute", attribute="risk_score")
    assert risk and risk[0]["level"] == "partial" and 0.5 < risk[0]["score"] < 0.95
    cost = named(await resolve(supply, "cost"), "attribute", attribute="unit_cost")
    assert cost and cost[0]["level"] == "partial"
    lead = named(await resolve(supply, "lead"), "attribute", attribute="lead_time_days")[0]
    lead_time = named(await resolve(supply, "lead time"), "attribute", attribute="lead_time_days")[0]
    assert lead_time["score"] > lead["score"], "two of three words cover more than one"
    whole = await resolve(supply, "suppliers")
    assert [c["target"] for c in whole["candidates"]] == ["kind"], "a name written whole is that name"


async def test_numbers_and_comparisons_become_predicates(supply: Stack) -> None:
    async def compared(words: str, attribute: str) -> list[tuple[str, Any]]:
        body = await resolve(supply, words)
        found = named(body, "comparison", attribute=attribute)
        assert found, (words, body["candidates"])
        return [(c["predicate"]["op"], c["predicate"]["value"]) for c in found]

    assert await compared("suppliers with a risk score above 80", "risk_score") == [("gt", "80")]
    assert await compared("suppliers with risk below 25", "risk_score") == [("lt", "25")]
    assert await compared("suppliers with at least 3 open flags", "open_flags") == [("ge", "3")]
    assert await compared("tier 1 suppliers", "tier") == [("eq", "1")]
    assert await compared("suppliers with a risk score between 20 and 40", "risk_score") == [
        ("ge", "20"),
        ("le", "40"),
    ]
    assert await compared("orders placed before March 2026", "ordered_on") == [("lt", "2026-03-01")]
    assert sorted(await compared("flags raised in 2025", "raised_on")) == [
        ("ge", "2025-01-01"),
        ("lt", "2026-01-01"),
    ]
    body = await resolve(supply, "parts that cost more than 100 EUR")
    cost = named(body, "comparison", attribute="unit_cost")
    assert cost[0]["predicate"] == {"attr": "unit_cost", "op": "gt", "value": "100.00"}, (
        "canonical decimal(10,2)"
    )
    assert cost[0]["unit"] == "EUR" and cost[0]["matched"] == "more than 100 eur"
    assert not named(body, "value", attribute="currency"), "the unit is not a Contract currency here"
    # a number no nearby word puts on an Attribute stays unmatched, but is no vocabulary gap
    loose = await resolve(supply, "plants 42")
    assert "42" in loose["unmatched"] and loose["coverage"]["unknown"] == []


async def test_record_names_and_keys_ground_to_the_records(supply: Stack) -> None:
    body = await resolve(supply, "Kavsen Alloys")
    record = named(body, "record", kind="Supplier")[0]
    assert record["refs"] == ["Supplier/S-1001"] and record["level"] == "prefix"
    assert record["predicate"] == {"attr": "supplier_code", "op": "eq", "value": "S-1001"}
    assert record["values"] == ["Kavsen Alloys Sp. z o.o."]
    # a 43-character legal name: longer than the value index keeps, still a Record name
    long_name = await resolve(supply, "Jiangsu Ruifeng Precision Bearing Co., Ltd.")
    assert named(long_name, "record", kind="Supplier")[0]["refs"] == ["Supplier/S-1015"]
    for key in ("S-1001", "s-1001"):
        by_key = named(await resolve(supply, f"lead time of {key}"), "record")
        assert [c["refs"] for c in by_key] == [["Supplier/S-1001"]], key
    typo = named(await resolve(supply, "Kavsen Aloys"), "record", kind="Supplier")
    assert typo and typo[0]["level"] == "similar" and typo[0]["score"] < record["score"]
    assert not named(await resolve(supply, "S-9999"), "record"), "no such Record"
    common = await resolve(supply, "framework")
    assert not named(common, "record"), "a word of 45 Contract titles names none of them"


async def test_typos_of_short_words_by_edit_distance(supply: Stack) -> None:
    for typo, target, expected in (
        ("supliers", "kind", "Supplier"),
        ("actve", "value", "status"),
        ("blokced", "value", "status"),
        ("catgory", "attribute", "category"),
    ):
        body = await resolve(supply, typo)
        found = [
            c
            for c in body["candidates"]
            if c["target"] == target and expected in (c["kind"], c.get("attribute"))
        ]
        assert found and found[0]["level"] == "similar" and found[0]["score"] < 0.95, (
            typo,
            body["candidates"],
        )
    assert not (await resolve(supply, "actv"))["candidates"], "four letters: no guessed edit"


async def test_function_words_are_no_gap_in_coverage_or_the_miss_log(supply: Stack) -> None:
    body = await resolve(supply, "which are how the xyzzy", record_misses=True)
    assert body["unmatched"] == ["which", "are", "how", "the", "xyzzy"]
    assert body["coverage"]["unknown"] == ["xyzzy"]
    assert body["coverage"]["notes"] == ["xyzzy: term unknown in this Domain"]
    async with supply.rt.db.engine.connect() as conn:
        phrases = {row[0] for row in await conn.execute(text("select phrase from resolve_misses"))}
    assert phrases == {"xyzzy"}


async def test_a_domain_sets_its_own_stop_words(stack: Stack) -> None:
    schema = {
        "kinds": {
            "Thing": {
                "key": ["code"],
                "attributes": {"code": {"type": "string"}, "colour": {"type": "string"}},
            }
        }
    }
    settings = {
        "read": {
            "resolve": {"language": "de", "stop_words": {"en": [], "de": ["welche", "colour"], "fr": []}}
        }
    }
    created = await stack.http.post(
        "/api/v1/domains",
        json={"name": "things", "schema": schema, "settings": settings},
        headers=stack.admin,
    )
    assert created.status_code == 201, created.text
    body = (
        await stack.http.post(
            "/api/v1/domains/things/resolve", json={"text": "welche colour the"}, headers=stack.admin
        )
    ).json()
    assert body["candidates"] == [], "a stop word of the Domain never grounds, even to an Attribute"
    assert body["coverage"]["unknown"] == ["the"], "the Domain's language is German"
    wrong = await stack.http.post(
        "/api/v1/domains",
        json={
            "name": "things2",
            "schema": schema,
            "settings": {"read": {"resolve": {"one_edit_min_letters": 1}}},
        },
        headers=stack.admin,
    )
    assert wrong.status_code == 422, wrong.text


async def test_intent_hints(supply: Stack) -> None:
    body = await resolve(supply, "how many suppliers per country")
    assert body["hints"][0] == {"hint": "count", "matched": "how many", "aggregate": {"count": True}}
    assert body["hints"][1:] == [
        {
            "hint": "group_by",
            "matched": "per country",
            "kind": kind,
            "attribute": "country",
            "aggregate": {"group_by": "country"},
        }
        for kind in ("Plant", "Supplier")
    ]
    assert {h["kind"] for h in body["hints"] if h["hint"] == "group_by"} == {"Plant", "Supplier"}
    assert body["unmatched"] == []
    plain = await resolve(supply, "how many orders are open")
    assert plain["hints"] == [{"hint": "count", "matched": "how many", "aggregate": {"count": True}}]
    top = await resolve(supply, "which supplier has the highest risk score")
    assert top["hints"] == [
        {
            "hint": "order_by",
            "matched": "highest",
            "kind": "Supplier",
            "attribute": "risk_score",
            "order_by": ["-risk_score"],
        }
    ]


async def test_a_narrowed_viewer_learns_nothing_of_hidden_kinds(supply: Stack) -> None:
    viewer = await supply.principal("usr_parts")
    await supply.grant("supply", "usr_parts", "viewer", kinds=["Part"])
    words = (
        "lead time supplied by supplies stocked at Kavsen Alloys S-1001 risk above 80 open flags "
        "quantity on hand how many per country vendors dormant Poznan Kavsen Aloys"
    )
    body = await resolve(supply, words, headers=viewer)
    hidden = {"Supplier", "Contract", "PurchaseOrder", "Plant", "RiskFlag"}
    assert all(c["kind"] == "Part" and c.get("to") in (None, "Part") for c in body["candidates"]), body[
        "candidates"
    ]
    assert not named(body, "relation") and not named(body, "record")
    assert not [h for h in body["hints"] if h.get("kind") in hidden]
    assert all(k["kind"] == "Part" for k in body["coverage"]["kinds"])
    assert all(a["kind"] == "Part" for a in body["coverage"]["attributes"])
    text_ = repr(body)
    for name in (
        "lead_time_days",
        "risk_score",
        "open_flags",
        "S-1001",
        "Kavsen Alloys Sp",
        "supplied_by",
        "stocked_at",
    ):
        assert name not in text_, name


async def test_no_sensitive_values_and_the_same_answer_twice(supply: Stack) -> None:
    vat = await resolve(supply, "PL7792408316")
    assert vat["candidates"] == [], "vat_number is sensitive: its values are never indexed"
    words = "how many active suppliers in Poland have a risk score above 60 per tier, Kavsen Aloys S-1002"
    first = await supply.http.post(R, json={"text": words, "record_misses": False}, headers=supply.admin)
    second = await supply.http.post(R, json={"text": words, "record_misses": False}, headers=supply.admin)
    assert first.content == second.content


async def test_record_names_at_a_revision_and_after_a_commit(stack: Stack) -> None:
    schema = {
        "kinds": {
            "Firm": {
                "key": ["code"],
                "title": "name",
                "attributes": {
                    "code": {"type": "string", "pattern": "^F-[0-9]{3}$"},
                    "name": {"type": "string"},
                },
            }
        }
    }
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "firms", "schema": schema}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    first = [{"kind": "Firm", "values": {"code": "F-001", "name": "Aldren Tooling Works"}}]
    assert (
        await stack.http.post("/api/v1/domains/firms/imports", json={"records": first}, headers=stack.admin)
    ).status_code == 200
    before = (await stack.http.get("/api/v1/domains/firms/branches/main", headers=stack.admin)).json()["head"]

    async def records(words: str, **body: Any) -> list[list[str]]:
        response = await stack.http.post(
            "/api/v1/domains/firms/resolve",
            json={"text": words, "record_misses": False, **body},
            headers=stack.admin,
        )
        assert response.status_code == 200, response.text
        return [c["refs"] for c in response.json()["candidates"] if c["target"] == "record"]

    assert await records("Aldren Tooling") == [["Firm/F-001"]]
    second = [{"kind": "Firm", "values": {"code": "F-002", "name": "Zephyr Casting"}}]
    assert (
        await stack.http.post("/api/v1/domains/firms/imports", json={"records": second}, headers=stack.admin)
    ).status_code == 200
    assert await records("Zephyr Casting") == [["Firm/F-002"]], "a new title after a commit"
    assert await records("Zephyr Casting", at=before) == [], "not yet at that Revision"
    assert await records("F-002", at=before) == []
    assert await records("Aldren Tooling", at=before) == [["Firm/F-001"]]
