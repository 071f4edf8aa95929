"""Resolve's classes of issue 31 on the supply schema, without a database: number words,
comparatives, superlatives and top-k, verbs of state, counts of related Records and dates as people
say them. Each answers the same bytes for the same words, offers ties ranked, and never names what
the caller may not read."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from examples.analyst import energy
from tests.unit.resolve_words import SUPPLY, TODAY, answer_bytes, ground, named


def test_number_words_are_numbers_where_a_number_fits() -> None:
    body = ground("suppliers with a risk score above seventy")
    assert [c["predicate"] for c in named(body, "comparison")] == [
        {"attr": "risk_score", "op": "gt", "value": "70"}
    ]
    assert named(body, "comparison")[0]["matched"] == "above seventy"
    body = ground("orders with a quantity of more than a dozen")
    assert [c["predicate"] for c in named(body, "comparison", kind="PurchaseOrder")] == [
        {"attr": "quantity", "op": "gt", "value": "12"}
    ]
    assert [c["predicate"] for c in named(ground("tier one suppliers"), "comparison")] == [
        {"attr": "tier", "op": "eq", "value": "1"}
    ]
    body = ground("orders with a quantity of at least twenty-five")
    assert {c["predicate"]["value"] for c in named(body, "comparison")} == {"25"}
    body = ground("orders with a quantity between twenty five and two hundred")
    assert [c["predicate"] for c in named(body, "comparison", kind="PurchaseOrder")] == [
        {"attr": "quantity", "op": "ge", "value": "25"},
        {"attr": "quantity", "op": "le", "value": "200"},
    ]


def test_a_number_word_alone_is_neither_unknown_nor_a_misspelt_name() -> None:
    body = ground("three parts")
    assert not [c for c in body["candidates"] if "three" in c["matched"]]
    assert "three" in body["unmatched"]
    assert answer_bytes("three parts") == answer_bytes("three parts")


def test_number_words_of_a_hidden_attribute_ground_nothing() -> None:
    body = ground("suppliers with a risk score above seventy", kinds=("Part",))
    assert not named(body, "comparison")
    assert not [c for c in body["candidates"] if c["kind"] == "Supplier"]


def comparisons(text: str, kinds: tuple[str, ...] | None = None) -> list[tuple[str, str, str, str, float]]:
    return [
        (c["kind"], c["attribute"], c["predicate"]["op"], c["predicate"]["value"], c["score"])
        for c in named(ground(text, kinds), "comparison")
    ]


def test_comparatives_map_to_an_attribute_and_an_operator() -> None:
    assert comparisons("parts cheaper than 20 EUR") == [("Part", "unit_cost", "lt", "20.00", 0.8)]
    assert comparisons("parts cheaper than twenty euros") == [("Part", "unit_cost", "lt", "20.00", 0.8)]
    assert comparisons("orders more expensive than 1000") == [
        ("PurchaseOrder", "total", "gt", "1000.00", 0.8)
    ]
    assert comparisons("parts less expensive than 5") == [("Part", "unit_cost", "lt", "5.00", 0.8)]
    # older than a year: a date, earlier; the date that starts the Record first, the other offered below
    assert comparisons("contracts older than 2023") == [
        ("Contract", "valid_from", "lt", "2023-01-01", 0.8),
        ("Contract", "valid_to", "lt", "2023-01-01", 0.5),
    ]
    assert comparisons("flags newer than March 2026") == [("RiskFlag", "raised_on", "ge", "2026-04-01", 0.8)]
    # an Attribute named nearby wins over the dimension
    assert comparisons("parts with a unit cost cheaper than 20")[0][:4] == (
        "Part",
        "unit_cost",
        "lt",
        "20.00",
    )
    body = ground("orders older than 2023")
    assert not named(body, "kind", kind="PurchaseOrder", level="similar"), "older is no misspelling of order"
    assert "older" not in body["unmatched"]


def test_older_than_a_number_is_an_age_and_than_a_year_a_date() -> None:
    schema = {
        "kinds": {
            "Person": {
                "key": ["id"],
                "attributes": {
                    "id": {"type": "string"},
                    "age": {"type": "integer", "description": "Age in years."},
                    "born_on": {"type": "date", "description": "Date of birth."},
                },
            }
        }
    }
    assert comparisons_in(schema, "people older than 40") == [("Person", "age", "gt", "40", 0.8)]
    assert comparisons_in(schema, "people older than 1990") == [
        ("Person", "born_on", "lt", "1990-01-01", 0.8)
    ]
    assert comparisons_in(schema, "people younger than forty") == [("Person", "age", "lt", "40", 0.8)]


def test_comparatives_offer_ties_ranked_and_the_same_bytes() -> None:
    # two date Attributes that start nothing: both offered at 0.6, in schema order, never one guessed
    schema = {
        "kinds": {
            "Lot": {
                "key": ["id"],
                "attributes": {
                    "id": {"type": "string"},
                    "checked_on": {"type": "date"},
                    "packed_on": {"type": "date"},
                },
            }
        }
    }
    assert comparisons_in(schema, "lots older than 2020") == [
        ("Lot", "checked_on", "lt", "2020-01-01", 0.6),
        ("Lot", "packed_on", "lt", "2020-01-01", 0.6),
    ]
    assert answer_bytes("parts cheaper than 20 EUR and older than 2023") == answer_bytes(
        "parts cheaper than 20 EUR and older than 2023"
    )


def test_comparatives_never_name_a_hidden_kind() -> None:
    assert comparisons("orders more expensive than 1000", kinds=("Part",)) == [
        ("Part", "unit_cost", "gt", "1000.00", 0.8)
    ], "PurchaseOrder is hidden: the money of the Kinds it may read"
    assert not [c for c in comparisons("suppliers riskier than 70", kinds=("Part", "Contract"))]


def comparisons_in(schema: dict[str, Any], text: str) -> list[tuple[str, str, str, str, float]]:
    return [
        (c["kind"], c["attribute"], c["predicate"]["op"], c["predicate"]["value"], c["score"])
        for c in named(ground(text, schema=schema), "comparison")
    ]


def orders(text: str, kinds: tuple[str, ...] | None = None) -> list[tuple[Any, ...]]:
    return [
        (h["kind"], h["order_by"][0], h.get("limit"), h.get("score"))
        for h in ground(text, kinds)["hints"]
        if h["hint"] == "order_by"
    ]


def test_superlatives_and_top_k_are_an_order_with_a_limit() -> None:
    assert orders("the most expensive part") == [("Part", "-unit_cost", None, 0.8)]
    assert orders("the three cheapest parts") == [("Part", "unit_cost", 3, 0.8)]
    assert orders("the cheapest ten parts") == [("Part", "unit_cost", 10, 0.8)]
    assert orders("the most recent order") == [("PurchaseOrder", "-ordered_on", None, 0.8)]
    assert orders("the newest risk flags") == [("RiskFlag", "-raised_on", None, 0.8)]
    assert orders("top 5 suppliers by risk score") == [("Supplier", "-risk_score", 5, None)]
    assert orders("which supplier has the highest risk score") == [("Supplier", "-risk_score", None, None)]
    body = ground("the three cheapest parts")
    assert body["hints"][0]["matched"] == "three cheapest" and body["unmatched"] == ["the"]


def test_superlative_ties_are_offered_ranked() -> None:
    # the oldest contract: the date that starts it first, the end date offered below
    assert orders("the oldest contract") == [
        ("Contract", "valid_from", None, 0.8),
        ("Contract", "valid_to", None, 0.5),
    ]
    assert orders("top 3 riskiest suppliers") == [
        ("Supplier", "-risk_score", 3, 0.8),
        ("Supplier", "-open_flags", 3, 0.5),
    ]
    assert answer_bytes("the oldest contract") == answer_bytes("the oldest contract")


def test_superlatives_never_name_a_hidden_kind() -> None:
    assert orders("the riskiest supplier", kinds=("Part",)) == []
    # open_flags counts RiskFlags: unseen by a caller who may not read them, so never offered
    assert orders("the riskiest supplier", kinds=("Supplier",)) == [("Supplier", "-risk_score", None, 0.8)]
    assert orders("the most expensive order", kinds=("Part",)) == [("Part", "-unit_cost", None, 0.8)]


def test_verbs_of_state_name_a_date_or_a_relation() -> None:
    # a past participle alone: the end date before the day of the Revision
    assert comparisons("expired contracts") == [("Contract", "valid_to", "lt", "2026-10-15", 0.8)]
    assert named(ground("expired contracts"), "comparison")[0]["level"] == "state"
    # a verb of state before a date: the comparison is on the date that ends
    assert comparisons("contracts that expire before 2027") == [
        ("Contract", "valid_to", "lt", "2027-01-01", 0.8)
    ]
    # a participle of a Relation's verb: the Records at its object end having a Link
    assert ground("which suppliers are flagged")["hints"] == [
        {
            "hint": "has_link",
            "matched": "flagged",
            "kind": "Supplier",
            "relation": "flags",
            "path": ["risk_flags"],
            "to": "RiskFlag",
        }
    ]
    assert answer_bytes("flagged suppliers that expired") == answer_bytes("flagged suppliers that expired")


def test_verbs_of_state_never_name_a_hidden_kind() -> None:
    assert ground("which suppliers are flagged", kinds=("Supplier",))["hints"] == [], "RiskFlag is hidden"
    assert ground("expired contracts", kinds=("Part",))["candidates"] == []


def test_counting_related_records_is_a_count_of_links_per_record() -> None:
    body = ground("how many parts does each tier 1 supplier supply")
    assert body["hints"] == [
        {"hint": "count", "matched": "how many", "aggregate": {"count": True}},
        {
            "hint": "count_links",
            "matched": "each tier 1 supplier",
            "kind": "Supplier",
            "relation": "supplied_by",
            "path": ["supplies"],
            "to": "Part",
        },
    ], "no group_by on tier: the question fixed it"
    assert [c["predicate"] for c in named(body, "comparison")] == [{"attr": "tier", "op": "eq", "value": "1"}]
    # no Relation said: the one joining the two Kinds named
    assert [
        h["path"] for h in ground("how many parts per supplier")["hints"] if h["hint"] == "count_links"
    ] == [["supplies"]]
    assert answer_bytes("how many risk flags does each supplier have") == answer_bytes(
        "how many risk flags does each supplier have"
    )


def test_counting_related_records_never_names_a_hidden_kind() -> None:
    hints = ground("how many parts does each tier 1 supplier supply", kinds=("Part",))["hints"]
    assert [h["hint"] for h in hints] == ["count"]
    hints = ground("how many risk flags does each supplier have", kinds=("Supplier", "Part"))["hints"]
    assert not [h for h in hints if h["hint"] == "count_links"]


def dates(text: str, today: date = TODAY) -> list[tuple[Any, ...]]:
    return [
        (c["attribute"], c["predicate"]["op"], c["predicate"]["value"], c.get("interval"))
        for c in named(ground(text, today=today), "comparison")
    ]


def test_dates_as_people_say_them_count_from_the_revisions_day() -> None:
    said = {"from": "2026-09-01", "before": "2026-10-01", "today": "2026-10-15"}
    assert dates("orders placed last month") == [
        ("ordered_on", "ge", "2026-09-01", said),
        ("ordered_on", "lt", "2026-10-01", said),
    ]
    this_year = {"from": "2026-01-01", "before": "2027-01-01", "today": "2026-10-15"}
    assert dates("flags raised this year") == [
        ("raised_on", "ge", "2026-01-01", this_year),
        ("raised_on", "lt", "2027-01-01", this_year),
    ]
    assert dates("orders since Q3")[0][:3] == ("ordered_on", "ge", "2026-07-01")
    assert dates("orders before the end of March")[0][:3] == ("ordered_on", "lt", "2026-04-01")
    assert dates("flags raised in the last 30 days")[0][:3] == ("raised_on", "ge", "2026-09-16")
    assert dates("orders placed last week")[0][:3] == ("ordered_on", "ge", "2026-10-05")
    # a year said is not relative: no interval
    assert dates("orders in Q2 2026") == [
        ("ordered_on", "ge", "2026-04-01", None),
        ("ordered_on", "lt", "2026-07-01", None),
    ]
    # the same words at a Revision of another day read another interval
    assert dates("orders since Q3", today=date(2027, 2, 1))[0][:3] == ("ordered_on", "ge", "2027-07-01")
    assert dates("contracts that expire this year")[0][:3] == ("valid_to", "ge", "2026-01-01")
    assert answer_bytes("orders placed last month") == answer_bytes("orders placed last month")


def test_dates_never_name_a_hidden_kind() -> None:
    assert ground("orders placed last month", kinds=("Part",))["candidates"] == []


def test_the_most_of_a_related_kind_ranks_records_by_their_links() -> None:
    assert ground("which part has the fewest suppliers")["hints"] == [
        {
            "hint": "count_links",
            "matched": "fewest suppliers",
            "kind": "Part",
            "relation": "supplied_by",
            "path": ["supplied_by"],
            "to": "Supplier",
            "order": "asc",
        }
    ]
    hints = ground("the two suppliers with the most parts")["hints"]
    assert [(h["kind"], h["path"], h["order"], h["limit"]) for h in hints] == [
        ("Supplier", ["supplies"], "desc", 2)
    ]
    hidden = ground("which supplier has the most risk flags", kinds=("Supplier", "Part"))["hints"]
    assert not [h for h in hidden if h["hint"] == "count_links" or "RiskFlag" in repr(h)]


def test_a_negated_participle_asks_for_records_without_the_link() -> None:
    for text, matched in (
        ("which suppliers are not flagged", "not flagged"),
        ("unflagged suppliers", "unflagged"),
    ):
        hints = ground(text)["hints"]
        assert [(h["hint"], h["matched"], h["kind"], h["path"], h.get("negated")) for h in hints] == [
            ("has_link", matched, "Supplier", ["risk_flags"], True)
        ]
    assert "negated" not in ground("flagged suppliers")["hints"][0]


def _declaring(**comparatives: dict[str, str]) -> dict[str, Any]:
    """The supply schema with `comparatives` on the Attributes named Kind__attribute."""
    schema = json.loads(json.dumps(SUPPLY))
    for where, words in comparatives.items():
        kind, attribute = where.split("__")
        schema["kinds"][kind]["attributes"][attribute]["comparatives"] = words
    return schema


def test_a_domain_ties_comparatives_to_its_attributes_in_the_schema() -> None:
    schema = _declaring(Part__unit_cost={"dearer": "gt", "dearest": "max", "thriftiest": "min"})
    body = ground("parts dearer than 20 EUR", schema=schema)
    assert [(c["attribute"], c["predicate"], c["score"], c["level"]) for c in named(body, "comparison")] == [
        ("unit_cost", {"attr": "unit_cost", "op": "gt", "value": "20.00"}, 0.8, "comparative")
    ]
    assert named(body, "comparison")[0]["unit"] == "EUR"
    # a superlative declared: an order with a limit; min ascending, max descending
    hints = ground("the three thriftiest parts", schema=schema)["hints"]
    assert [(h["order_by"], h["limit"], h["score"], h["level"]) for h in hints] == [
        (["unit_cost"], 3, 0.8, "superlative")
    ]
    hints = ground("the dearest part", schema=schema)["hints"]
    assert [h["order_by"] for h in hints] == [["-unit_cost"]]
    # without the schema the words mean nothing and are never misspelt names
    assert not named(ground("parts dearer than 20 EUR"), "comparison")
    assert answer_bytes("parts dearer than 20 EUR") == answer_bytes("parts dearer than 20 EUR")


def test_a_declared_word_comes_before_the_lexicon_and_ties_are_offered() -> None:
    # "heavier" is a weight in the lexicon; the Domain says it is the order's quantity
    schema = _declaring(PurchaseOrder__quantity={"heavier": "gt"})
    assert comparisons_in(schema, "orders heavier than 50") == [
        ("PurchaseOrder", "quantity", "gt", "50", 0.8)
    ]
    # two Attributes declaring the same word: both offered at 0.6, in schema order
    schema = _declaring(Part__unit_cost={"pricier": "gt"}, PurchaseOrder__total={"pricier": "gt"})
    assert comparisons_in(schema, "pricier than 100") == [
        ("Part", "unit_cost", "gt", "100.00", 0.6),
        ("PurchaseOrder", "total", "gt", "100.00", 0.6),
    ]
    # the Kind the question names narrows them
    assert comparisons_in(schema, "orders pricier than 100") == [
        ("PurchaseOrder", "total", "gt", "100.00", 0.8)
    ]


def test_a_declared_word_on_a_hidden_attribute_grounds_nothing() -> None:
    schema = _declaring(Supplier__risk_score={"shakier": "gt", "shakiest": "max"})
    assert comparisons_in(schema, "suppliers shakier than 40") == [
        ("Supplier", "risk_score", "gt", "40", 0.8)
    ]
    body = ground("suppliers shakier than 40", kinds=("Part",), schema=schema)
    assert not named(body, "comparison")
    assert not ground("the shakiest supplier", kinds=("Part",), schema=schema)["hints"]


def _energy(text: str, kinds: tuple[str, ...] | None = None, today: date = TODAY) -> dict[str, Any]:
    return ground(text, kinds, today, schema=json.loads(json.dumps(energy.SCHEMA)))


def orjson_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True).encode()


def test_overdue_is_a_due_date_before_the_day_of_the_revision() -> None:
    body = _energy("scheduled inspections that are overdue")
    assert [
        (c["attribute"], c["predicate"]["op"], c["predicate"]["value"], c["level"])
        for c in named(body, "comparison")
    ] == [("due_on", "lt", TODAY.isoformat(), "state")]
    assert _energy("scheduled inspections that are overdue", today=date(2027, 1, 2)) != body
    assert orjson_bytes(_energy("overdue inspections")) == orjson_bytes(_energy("overdue inspections"))


def test_running_at_is_a_level_of_the_load_an_attribute_has() -> None:
    body = _energy("assets running at more than 90")
    assert [
        (c["attribute"], c["predicate"], c["level"], c["matched"]) for c in named(body, "comparison")
    ] == [
        ("output_pct", {"attr": "output_pct", "op": "gt", "value": "90"}, "state", "running at more than 90")
    ]
    body = _energy("assets operating at 100 percent")
    assert [
        (c["predicate"]["op"], c["predicate"]["value"], c.get("unit")) for c in named(body, "comparison")
    ] == [("eq", "100", "percent")]
    # no Attribute of the Kinds named has a load: the verb grounds nothing (the comparison is
    # inferred as any other, from the only number of the Kind)
    body = _energy("sites running at more than 90")
    assert [c["level"] for c in named(body, "comparison")] == ["inferred"]
    assert body["unmatched"] == ["running", "at"]
    # nor for a caller who may not read the Asset
    assert not named(_energy("assets running at more than 90", kinds=("Site",)), "comparison")


def test_a_participle_read_as_its_relation_is_still_a_state() -> None:
    hints = _energy("assets never inspected")["hints"]
    assert hints == [
        {
            "hint": "has_link",
            "matched": "never inspected",
            "kind": "Asset",
            "relation": "inspects",
            "path": ["inspections"],
            "to": "Inspection",
            "negated": True,
        }
    ]


def test_a_rate_unit_is_part_of_the_comparison_not_a_grouping() -> None:
    body = _energy("how many assets are cheaper than 40 EUR per MWh")
    assert [c["matched"] for c in named(body, "comparison")] == ["cheaper than 40 eur per mwh"]
    assert [h["hint"] for h in body["hints"]] == ["count"]


def test_not_before_a_comparison_is_its_opposite() -> None:
    assert comparisons("contracts not older than 2023")[0] == (
        "Contract",
        "valid_from",
        "ge",
        "2023-01-01",
        0.8,
    )
    body = ground("suppliers with a risk score not above 70")
    assert [(c["predicate"], c["matched"]) for c in named(body, "comparison")] == [
        ({"attr": "risk_score", "op": "le", "value": "70"}, "not above 70")
    ]
    assert comparisons("parts not cheaper than 20 EUR") == [("Part", "unit_cost", "ge", "20.00", 0.8)]
    assert "not" not in ground("parts not cheaper than 20 EUR")["unmatched"]


def test_without_a_kind_is_a_negated_link() -> None:
    assert ground("suppliers without risk flags")["hints"] == [
        {
            "hint": "has_link",
            "matched": "without risk flags",
            "kind": "Supplier",
            "relation": "flags",
            "path": ["risk_flags"],
            "to": "RiskFlag",
            "negated": True,
        }
    ]
    hints = ground("how many parts with no supplier")["hints"]
    assert [(h["hint"], h.get("kind"), h.get("path"), h.get("negated")) for h in hints] == [
        ("count", None, None, None),
        ("has_link", "Part", ["supplied_by"], True),
    ]
    # an Attribute after "without" is no Kind; a hidden Kind is never named
    assert not ground("suppliers without a risk score above 70")["hints"]
    assert not ground("suppliers without risk flags", kinds=("Supplier",))["hints"]


def test_a_number_before_the_kind_a_superlative_ranks_is_its_limit() -> None:
    def orders(text: str) -> list[tuple[list[str], int | None]]:
        return [(h["order_by"], h.get("limit")) for h in ground(text)["hints"] if h["hint"] == "order_by"]

    assert orders("the 5 suppliers with the highest risk score") == [(["-risk_score"], 5)]
    assert orders("the three parts with the lowest unit cost") == [(["unit_cost"], 3)]
    assert orders("which three parts are the cheapest") == [(["unit_cost"], 3)]
    # a number compared is no count of Records
    assert orders("suppliers with more than 5 parts with the highest risk score") == [(["-risk_score"], None)]
    assert orders("at least 3 parts with the lowest unit cost") == [(["unit_cost"], None)]
