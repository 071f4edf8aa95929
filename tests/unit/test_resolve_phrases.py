"""Resolve's classes of issue 31 on the supply schema, without a database: number words,
comparatives, superlatives and top-k, verbs of state, counts of related Records and dates as people
say them. Each answers the same bytes for the same words, offers ties ranked, and never names what
the caller may not read."""

from __future__ import annotations

from tests.unit.resolve_words import answer_bytes, ground, named


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
