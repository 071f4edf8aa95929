"""How analysts compare and rank, on the supply example, asked as written (issue 31): number words,
comparatives, superlatives and top-k, verbs of state, counts of related Records, dates as people
say them. Resolve grounds the words; the reference agent (examples/analyst/agent.py) answers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import text

from examples.analyst.agent import answer
from lorebase.schema import parse_yaml
from tests.integration.conftest import Stack
from tests.integration.test_resolve_classes import named, resolve


async def test_number_words_are_numbers_and_never_start_a_name(supply: Stack) -> None:
    whole = await resolve(supply, "what does the Three-phase induction motor cost")
    motor = named(whole, "record", kind="Part")
    assert (
        motor and motor[0]["level"] in ("exact", "prefix") and motor[0]["matched"].startswith("three-phase")
    )
    spaced = await resolve(supply, "unit cost of the three phase induction motor")
    assert named(spaced, "record", kind="Part"), "the beginning of the name, written whole"
    top = await resolve(supply, "the three parts with a unit cost above twenty")
    assert not named(top, "record"), "three is a number, not the start of a Part's name"
    assert [c["predicate"] for c in named(top, "comparison", kind="Part")] == [
        {"attr": "unit_cost", "op": "gt", "value": "20.00"}
    ]
    assert "three" not in top["coverage"]["unknown"]


SUPPLY_SCHEMA = parse_yaml(
    (Path(__file__).resolve().parents[2] / "examples" / "supply" / "schema.yaml").read_text()
)
SUPPLY_DATA = orjson.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "supply" / "data.json").read_bytes()
)


def records(kind: str) -> list[dict[str, Any]]:
    return [r["values"] for r in SUPPLY_DATA["records"] if r["kind"] == kind]


KEYS = {
    "Part": "part_number",
    "PurchaseOrder": "po_number",
    "Contract": "contract_number",
    "RiskFlag": "flag_id",
}


def keys(kind: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return {"keys": sorted(r[KEYS[kind]] for r in records(kind) if test(r))}


def count(kind: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return {"count": sum(1 for r in records(kind) if test(r))}


async def asked(stack: Stack, questions: dict[str, dict[str, Any]]) -> None:
    """The reference agent answers each question as written."""
    stack.http.headers.update(stack.admin)
    wrong = {}
    for question, expected in questions.items():
        found, _ = await answer(stack.http, "supply", question)
        if found != expected:
            wrong[question] = (found, expected)
    assert not wrong, wrong


async def test_comparatives_answered_as_written(supply: Stack) -> None:
    body = await resolve(supply, "orders older than 2023")
    assert not named(body, "kind", level="similar"), "older is not a misspelling of order"
    await asked(
        supply,
        {
            "Which parts are cheaper than 20 EUR?": keys("Part", lambda r: Decimal(r["unit_cost"]) < 20),
            "Which parts are cheaper than twelve euros?": keys(
                "Part", lambda r: Decimal(r["unit_cost"]) < 12
            ),
            "How many orders are more expensive than 5000 euros?": count(
                "PurchaseOrder", lambda r: Decimal(r["total"]) > 5000
            ),
            "How many contracts are older than 2023?": count("Contract", lambda r: r["valid_from"] < "2023"),
            "How many risk flags are newer than March 2026?": count(
                "RiskFlag", lambda r: r["raised_on"] >= "2026-04-01"
            ),
        },
    )
    # a Domain's own words, set by a change set (docs/schema.md, `comparatives`); a wrong one is
    # refused naming the entry, and nothing changes
    changes = "/api/v1/domains/supply/branches/main/schema/changes"
    dearer = {"op": "change_attribute", "kind": "Part", "attribute": "unit_cost"}
    refused = await supply.http.post(
        changes,
        json={"changes": [{**dearer, "definition": {"comparatives": {"dearer": "above"}}}]},
        headers=supply.admin,
    )
    assert refused.status_code == 422, refused.text
    assert "kinds.Part.attributes.unit_cost.comparatives.dearer" in refused.text
    assert "unknown operator 'above'" in refused.text
    assert not named(await resolve(supply, "parts dearer than 40 EUR"), "comparison")
    changed = await supply.http.post(
        changes,
        json={
            "changes": [{**dearer, "definition": {"comparatives": {"dearer": "gt", "dearest": "max"}}}],
            "message": "Words of our own for the unit cost",
        },
        headers=supply.admin,
    )
    assert changed.status_code == 200, changed.text
    await asked(
        supply,
        {
            "Which parts are dearer than 40 EUR?": keys("Part", lambda r: Decimal(r["unit_cost"]) > 40),
            "Which is the dearest part?": ranked("Part", "unit_cost", 1, True),
        },
    )
    # a Domain whose questions are German reads the lexicon's German words
    schema = orjson.loads(orjson.dumps(SUPPLY_SCHEMA))
    schema["kinds"]["Part"]["aliases"] += ["teil", "teile"]
    created = await supply.http.post(
        "/api/v1/domains",
        json={"name": "lager", "schema": schema, "settings": {"read": {"resolve": {"language": "de"}}}},
        headers=supply.admin,
    )
    assert created.status_code == 201, created.text
    response = await supply.http.post(
        "/api/v1/domains/lager/resolve",
        json={"text": "die drei billigsten Teile, Teile billiger als zwanzig EUR", "record_misses": False},
        headers=supply.admin,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [c["predicate"] for c in named(body, "comparison")] == [
        {"attr": "unit_cost", "op": "lt", "value": "20.00"}
    ]
    assert [(h["order_by"], h["limit"]) for h in body["hints"] if h["hint"] == "order_by"] == [
        (["unit_cost"], 3)
    ]


def ranked(kind: str, attr: str, n: int, highest: bool) -> dict[str, Any]:
    """The first n Records by attr (ties by key, as POST /query orders them)."""
    rows = [r for r in records(kind) if r.get(attr) is not None]
    value = (
        (lambda r: Decimal(r[attr])) if attr in ("unit_cost", "total", "quantity") else (lambda r: r[attr])
    )
    rows.sort(key=lambda r: r[KEYS[kind]])
    rows.sort(key=value, reverse=highest)
    return {"keys": sorted(r[KEYS[kind]] for r in rows[:n])}


async def suppliers(stack: Stack) -> list[dict[str, Any]]:
    """The Suppliers as loaded (update_supplier changed some after the import)."""
    response = await stack.http.post(
        "/api/v1/domains/supply/query", json={"kind": "Supplier", "limit": 1000}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    return [{"key": r["key"], **r["values"]} for r in response.json()["records"]]


async def test_superlatives_and_top_k_answered_as_written(supply: Stack) -> None:
    loaded = await suppliers(supply)
    riskiest = sorted(loaded, key=lambda r: (-int(r["risk_score"]), r["key"]))
    await asked(
        supply,
        {
            "Which are the three cheapest parts?": ranked("Part", "unit_cost", 3, False),
            "What is the most expensive part?": ranked("Part", "unit_cost", 1, True),
            "Which is the most recent purchase order?": ranked("PurchaseOrder", "ordered_on", 1, True),
            "Which are the two oldest risk flags?": ranked("RiskFlag", "raised_on", 2, False),
            "Which supplier is the riskiest?": {"keys": [riskiest[0]["key"]]},
            "Top 5 suppliers by risk score": {"keys": sorted(r["key"] for r in riskiest[:5])},
        },
    )


def linked(relation: str, end: str) -> set[str]:
    """The keys at one end (`from` or `to`) of the example's Links of a Relation."""
    return {link[end] for link in SUPPLY_DATA["links"] if link["relation"] == relation}


async def test_verbs_of_state_answered_as_written(supply: Stack) -> None:
    flagged = linked("flags", "to")
    loaded = {r["key"]: r for r in await suppliers(supply)}
    body = await resolve(supply, "expired contracts")
    assert [c["predicate"] for c in named(body, "value", attribute="status")] == [
        {"attr": "status", "op": "eq", "value": "expired"}
    ], "a stored value spelled the same takes the word"
    await asked(
        supply,
        {
            "Which suppliers are flagged?": {"keys": sorted(flagged)},
            "How many flagged suppliers are in Poland?": {
                "count": sum(1 for key in flagged if loaded[key].get("country") == "PL")
            },
            "Which contracts expire before 2026?": keys("Contract", lambda r: r["valid_to"] < "2026-01-01"),
            "How many expired contracts are there?": count("Contract", lambda r: r["status"] == "expired"),
        },
    )


async def test_counts_of_related_records_answered_as_written(supply: Stack) -> None:
    loaded = await suppliers(supply)
    supplied = [link["to"] for link in SUPPLY_DATA["links"] if link["relation"] == "supplied_by"]
    flags = [link["to"] for link in SUPPLY_DATA["links"] if link["relation"] == "flags"]
    await asked(
        supply,
        {
            "How many parts does each tier 1 supplier supply?": {
                "groups": {r["key"]: supplied.count(r["key"]) for r in loaded if r.get("tier") == "1"}
            },
            "How many risk flags does each supplier in Poland have?": {
                "groups": {r["key"]: flags.count(r["key"]) for r in loaded if r.get("country") == "PL"}
            },
        },
    )


async def test_dates_as_people_say_them_answered_as_written(supply: Stack) -> None:
    body = await resolve(supply, "orders since Q3")
    said = named(body, "comparison", attribute="ordered_on")[0]["interval"]
    today = date.fromisoformat(said["today"])
    async with supply.rt.db.engine.connect() as conn:
        created = (
            await conn.execute(
                text("select created_at from revisions where id = :id"), {"id": body["revision"]}
            )
        ).scalar_one()
    assert created.astimezone(UTC).date() == today, "counted from the Revision's day"
    assert said["from"] == f"{today.year}-07-01"
    assert any(n.startswith("since q3: read as ") for n in body["coverage"]["notes"])
    year = today.year
    last_month_end = date(today.year, today.month, 1)
    last_month = (last_month_end - timedelta(days=1)).replace(day=1)
    await asked(
        supply,
        {
            "How many purchase orders were placed since Q3?": count(
                "PurchaseOrder", lambda r: r["ordered_on"] >= f"{year}-07-01"
            ),
            "How many risk flags were raised this year?": count(
                "RiskFlag", lambda r: r["raised_on"][:4] == str(year)
            ),
            "How many orders were placed before the end of March?": count(
                "PurchaseOrder", lambda r: r["ordered_on"] < f"{year}-04-01"
            ),
            "Which risk flags were raised last month?": keys(
                "RiskFlag", lambda r: last_month.isoformat() <= r["raised_on"] < last_month_end.isoformat()
            ),
        },
    )


async def test_a_narrowed_viewer_learns_nothing_of_hidden_kinds_from_the_new_words(supply: Stack) -> None:
    viewer = await supply.principal("usr_parts_31")
    await supply.grant("supply", "usr_parts_31", "viewer", kinds=["Part"])
    hidden = {"Supplier", "Contract", "PurchaseOrder", "Plant", "RiskFlag"}
    for words in (
        "flagged suppliers cheaper than twenty EUR",
        "the three riskiest suppliers and the oldest contract",
        "how many parts does each tier 1 supplier supply",
        "contracts that expire this year, expired contracts, orders placed last month",
        "orders more expensive than 1000 older than 2023",
    ):
        body = await resolve(supply, words, headers=viewer)
        assert all(c["kind"] == "Part" and c.get("to") in (None, "Part") for c in body["candidates"]), body
        assert all(
            h.get("kind") in (None, "Part") and h.get("to") in (None, "Part") for h in body["hints"]
        ), body
        assert not [name for name in hidden if name in repr(body["candidates"]) + repr(body["hints"])]
        assert all(k["kind"] == "Part" for k in body["coverage"]["kinds"])
