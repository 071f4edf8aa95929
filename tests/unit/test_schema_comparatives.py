"""An Attribute's `comparatives` (docs/schema.md): words a Domain ties to an ordered Attribute,
checked when the schema loads and when a change set sets them."""

from __future__ import annotations

import json

import pytest

from lorebase.schema import load_schema
from lorebase.schema.changes import SchemaChangeError, apply_changes
from tests.unit.resolve_words import SUPPLY


def test_comparatives_load_and_appear_in_the_document_only_when_declared() -> None:
    before = load_schema(SUPPLY).document
    assert "comparatives" not in before["kinds"]["Part"]["attributes"]["unit_cost"]
    plan = apply_changes(
        before,
        [
            {
                "op": "change_attribute",
                "kind": "Part",
                "attribute": "unit_cost",
                "definition": {"comparatives": {"dearer": "gt", "dearest": "max"}},
            }
        ],
    )
    assert plan.schema.kinds["Part"].attributes["unit_cost"].comparatives == {
        "dearer": "gt",
        "dearest": "max",
    }
    assert plan.schema.document["kinds"]["Part"]["attributes"]["unit_cost"]["comparatives"] == {
        "dearer": "gt",
        "dearest": "max",
    }
    # the same document loads again to the same schema
    assert load_schema(plan.schema.document).document == plan.schema.document


@pytest.mark.parametrize(
    ("attribute", "words", "message"),
    [
        (
            "name",
            {"longer": "gt"},
            "comparatives apply to ordered types (integer, decimal, date, datetime), not string",
        ),
        ("unit_cost", {"dearer": "above"}, "unknown operator 'above'; expected one of lt, gt, min, max"),
        ("unit_cost", {"Dearer": "gt"}, "'Dearer' must be one lower-case word"),
    ],
)
def test_a_change_set_with_a_bad_comparative_names_it_and_changes_nothing(
    attribute: str, words: dict[str, str], message: str
) -> None:
    before = load_schema(SUPPLY).document
    kept = json.dumps(before, sort_keys=True)
    with pytest.raises(SchemaChangeError) as raised:
        apply_changes(
            before,
            [
                {
                    "op": "change_attribute",
                    "kind": "Part",
                    "attribute": attribute,
                    "definition": {"comparatives": words},
                }
            ],
        )
    [issue] = raised.value.issues
    assert issue["rule"] == "schema.invalid"
    assert issue["path"].startswith(f"schema.kinds.Part.attributes.{attribute}.comparatives")
    assert message in issue["message"]
    assert json.dumps(before, sort_keys=True) == kept


def test_an_unknown_attribute_in_a_change_set_is_named() -> None:
    with pytest.raises(SchemaChangeError) as raised:
        apply_changes(
            load_schema(SUPPLY).document,
            [
                {
                    "op": "change_attribute",
                    "kind": "Part",
                    "attribute": "price",
                    "definition": {"comparatives": {"dearer": "gt"}},
                }
            ],
        )
    assert "price" in raised.value.issues[0]["message"]
