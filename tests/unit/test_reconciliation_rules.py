"""The reconciliation rules without a database (lorebase.reconciliation): which Attributes the exact
rules compare, how values fold, how pairs are found and scored (docs/reconciliation.md)."""

from __future__ import annotations

from typing import Any

from lorebase.reconciliation import Pair, _exact_pairs, exact_rules, fold, score_of
from lorebase.schema import load_schema

SCHEMA = {
    "kinds": {
        "Supplier": {
            "key": ["code"],
            "title": "name",
            "attributes": {
                "code": {"type": "string", "required": True},
                "name": {"type": "string"},
                "vat": {"type": "string", "unique": True},
                "city": {"type": "string"},
            },
        },
        "Country": {
            "key": ["iso"],
            "title": "iso",
            "attributes": {"iso": {"type": "string", "unique": True}},
        },
    }
}


def test_fold_collapses_spacing_and_case() -> None:
    assert fold("  Kavsen   Alloys\tSP. z o.o. ") == "kavsen alloys sp. z o.o."
    assert fold(42) == "42"


def test_the_exact_rules_are_the_unique_attributes_and_a_title_that_is_not_unique() -> None:
    schema = load_schema(SCHEMA)
    assert exact_rules(schema.kinds["Supplier"]) == [("vat", "unique"), ("name", "title")]
    assert exact_rules(schema.kinds["Country"]) == [("iso", "unique")], "a unique title is compared once"


def test_pairs_in_key_order_with_every_rule_that_matched() -> None:
    kind = load_schema(SCHEMA).kinds["Supplier"]
    records: list[tuple[str, dict[str, Any]]] = [
        ("S-3", {"code": "S-3", "name": "Acme  GmbH", "vat": "de1"}),
        ("S-1", {"code": "S-1", "name": "acme gmbh", "vat": "DE1"}),
        ("S-2", {"code": "S-2", "name": "Other", "vat": None}),
        ("S-4", {"code": "S-4", "name": "ACME GMBH"}),
    ]
    pairs = _exact_pairs(kind, records, cap=100)
    assert sorted(pairs) == [("S-1", "S-3"), ("S-1", "S-4"), ("S-3", "S-4")]
    both = pairs[("S-1", "S-3")]
    assert [e["rule"] for e in both.evidence] == ["unique", "title"]
    assert both.evidence[0]["values"] == ["DE1", "de1"], "record_a's value first"
    assert both.score == 1.0 and pairs[("S-1", "S-4")].score == 0.9


def test_scores() -> None:
    similar = {"rule": "similar_title", "attribute": "name", "similarity": 0.8, "values": ["a", "b"]}
    assert score_of([similar]) == 0.72
    assert score_of([similar, {"rule": "title", "attribute": "name", "values": ["a", "a"]}]) == 0.9
    assert score_of([]) == 0.0
    assert Pair("K", "a", "b", [similar]).score == 0.72
