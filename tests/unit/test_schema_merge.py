"""The three-way merge of schema documents, element by element (lorebase.schema.merge)."""

from __future__ import annotations

from typing import Any

import pytest

from lorebase.schema import load_schema
from lorebase.schema.changes import SchemaChangeError, apply_changes
from lorebase.schema.merge import Renames, merge_documents

BASE: dict[str, Any] = load_schema(
    {
        "kinds": {
            "Supplier": {
                "key": ["code"],
                "title": "name",
                "implements": ["Named"],
                "attributes": {
                    "code": {"type": "string"},
                    "name": {"type": "string"},
                    "tier": {"type": "integer", "min": 1, "max": 3},
                },
            },
            "Part": {"key": ["number"], "attributes": {"number": {"type": "string"}}},
        },
        "relations": {"supplied_by": {"from": "Part", "to": "Supplier", "cardinality": "many_to_many"}},
        "traits": {"Named": {"attributes": {"name": {"type": "string"}}}},
        "lenses": {
            "risk": {"kinds": ["Supplier", "Part"], "relations": ["supplied_by"]},
            "named": {"traits": ["Named"]},
        },
    }
).document


def side(changes: list[dict[str, Any]]) -> tuple[dict[str, Any], Renames]:
    plan = apply_changes(BASE, changes)
    return plan.schema.document, plan.renames()


def merge(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    o, o_renames = side(ours)
    t, t_renames = side(theirs)
    merged, conflicts = merge_documents(BASE, o, t, ours_renames=o_renames, theirs_renames=t_renames)
    return merged, conflicts


ADD_CERT = {"op": "add_attribute", "kind": "Supplier", "attribute": "cert", "definition": {"type": "string"}}
RENAME_TIER = {"op": "rename_attribute", "kind": "Supplier", "attribute": "tier", "to": "supplier_tier"}


def test_changes_to_different_elements_merge() -> None:
    merged, conflicts = merge([ADD_CERT], [RENAME_TIER])
    assert conflicts == []
    attributes = load_schema(merged).kinds["Supplier"].attributes
    assert list(attributes) == ["code", "name", "supplier_tier", "cert"]


def test_a_kind_renamed_on_one_side_and_changed_on_the_other_merges_under_the_new_name() -> None:
    merged, conflicts = merge(
        [{"op": "rename_kind", "kind": "Supplier", "to": "Vendor"}],
        [ADD_CERT, {"op": "change_kind", "kind": "Supplier", "definition": {"description": "Sells parts."}}],
    )
    assert conflicts == []
    schema = load_schema(merged)
    assert (
        "cert" in schema.kinds["Vendor"].attributes and schema.kinds["Vendor"].description == "Sells parts."
    )
    assert schema.relations["supplied_by"].to_kind == "Vendor"
    assert list(schema.lenses["risk"].kinds) == ["Vendor", "Part"]


def test_the_same_element_changed_differently_is_a_conflict_naming_both_sides() -> None:
    widen = {"op": "change_attribute", "kind": "Supplier", "attribute": "tier", "definition": {"max": 5}}
    narrow = {"op": "change_attribute", "kind": "Supplier", "attribute": "tier", "definition": {"max": 2}}
    _, conflicts = merge([widen], [narrow])
    assert [c.element for c in conflicts] == ["Supplier.tier"]
    assert conflicts[0].ours["definition"]["max"] == 5 and conflicts[0].theirs["definition"]["max"] == 2
    assert conflicts[0].base["definition"]["max"] == 3


def test_renamed_differently_on_both_sides_is_a_conflict() -> None:
    other = {"op": "rename_attribute", "kind": "Supplier", "attribute": "tier", "to": "level"}
    _, conflicts = merge([RENAME_TIER], [other])
    assert [(c.element, c.ours["name"], c.theirs["name"]) for c in conflicts] == [
        ("Supplier.tier", "supplier_tier", "level")
    ]


def test_the_same_change_on_both_sides_and_a_removal_against_a_change() -> None:
    merged, conflicts = merge([ADD_CERT, RENAME_TIER], [ADD_CERT])
    assert conflicts == [] and "cert" in merged["kinds"]["Supplier"]["attributes"]
    removed = {"op": "remove_attribute", "kind": "Supplier", "attribute": "tier"}
    changed = {"op": "change_attribute", "kind": "Supplier", "attribute": "tier", "definition": {"max": 9}}
    _, conflicts = merge([removed], [changed])
    assert [(c.element, c.ours) for c in conflicts] == [("Supplier.tier", None)]


def test_a_resolution_picks_a_side() -> None:
    widen = {"op": "change_attribute", "kind": "Supplier", "attribute": "tier", "definition": {"max": 5}}
    narrow = {"op": "change_attribute", "kind": "Supplier", "attribute": "tier", "definition": {"max": 2}}
    o, _ = side([widen])
    t, _ = side([narrow])
    merged, conflicts = merge_documents(BASE, o, t, resolve=lambda c: "theirs")
    assert conflicts == [] and merged["kinds"]["Supplier"]["attributes"]["tier"]["max"] == 2


def test_traits_are_added_renamed_changed_and_removed_with_the_kinds_using_them() -> None:
    plan = apply_changes(
        BASE,
        [
            {"op": "rename_trait", "trait": "Named", "to": "Titled"},
            {"op": "change_trait", "trait": "Titled", "definition": {"description": "Has a name."}},
            {
                "op": "add_trait",
                "trait": "Ranked",
                "definition": {"attributes": {"tier": {"type": "integer"}}},
            },
            {"op": "change_kind", "kind": "Supplier", "definition": {"implements": ["Titled", "Ranked"]}},
        ],
    )
    assert plan.schema.kinds["Supplier"].implements == ("Titled", "Ranked")
    assert plan.schema.lenses["named"].traits == ("Titled",) and plan.touches["lenses"] == ["named"]
    assert plan.summary[0] == {"op": "rename_trait", "target": "Named", "to": "Titled", "kinds": ["Supplier"]}
    assert plan.renames().traits == {"Named": "Titled"}
    removed = apply_changes(BASE, [{"op": "remove_trait", "trait": "Named"}])
    assert "Named" not in removed.schema.traits and removed.schema.kinds["Supplier"].implements == ()
    assert "name" in removed.schema.kinds["Supplier"].attributes  # the Kind keeps its Attributes
    assert removed.schema.lenses["named"].traits == ()


def test_a_trait_change_the_kinds_cannot_follow_is_refused_naming_the_member() -> None:
    wrong = {"attributes": {"name": {"type": "integer"}}}
    with pytest.raises(SchemaChangeError) as refused:
        apply_changes(BASE, [{"op": "change_trait", "trait": "Named", "definition": wrong}])
    assert [i["path"] for i in refused.value.issues] == ["schema.kinds.Supplier.attributes.name.type"]
    with pytest.raises(SchemaChangeError) as refused:
        apply_changes(
            BASE,
            [
                {"op": "rename_trait", "trait": "Ghost", "to": "X"},
                {"op": "change_trait", "trait": "Named", "definition": {"kinds": []}},
                {"op": "add_trait", "trait": "Named", "definition": {}},
            ],
        )
    assert [(i["path"], i["rule"]) for i in refused.value.issues] == [
        ("changes[0].trait", "change.unknown"),
        ("changes[1].definition.kinds", "change.member"),
        ("changes[2].trait", "change.exists"),
    ]


def test_a_trait_renamed_on_one_side_and_changed_on_the_other_merges() -> None:
    merged, conflicts = merge(
        [{"op": "rename_trait", "trait": "Named", "to": "Titled"}],
        [{"op": "change_trait", "trait": "Named", "definition": {"description": "Has a name."}}],
    )
    assert conflicts == []
    schema = load_schema(merged)
    assert schema.traits["Titled"].description == "Has a name."
    assert schema.kinds["Supplier"].implements == ("Titled",) and schema.lenses["named"].traits == ("Titled",)
    _, conflicts = merge(
        [{"op": "rename_trait", "trait": "Named", "to": "Titled"}],
        [{"op": "rename_trait", "trait": "Named", "to": "Labelled"}],
    )
    assert [c.element for c in conflicts] == ["trait:Named"]


def test_a_split_and_a_merge_compute_the_new_values_from_the_old() -> None:
    unlink = {"op": "change_kind", "kind": "Supplier", "definition": {"implements": []}}
    merge_name = {
        "op": "merge_attributes",
        "kind": "Supplier",
        "attributes": ["name", "tier"],
        "to": "label",
        "definition": {"type": "string"},
        "backfill": {"expression": "name if tier == 1 else upper(name)"},
    }
    plan = apply_changes(BASE, [unlink, merge_name])
    before = {"code": "S-1", "name": "Acme", "tier": "2"}
    out = plan.kinds["Supplier"].migrate(before)
    assert plan.kinds["Supplier"].compute(plan.schema.kinds["Supplier"], before, out) == {}
    assert out == {"code": "S-1", "label": "ACME"}
    split = {
        "op": "split_attribute",
        "kind": "Supplier",
        "attribute": "name",
        "pattern": "(?P<name>[^ ]+) (?P<form>[A-Za-z]+)",
        "into": {"name": {"type": "string"}, "form": {"type": "string"}},
    }
    plan = apply_changes(BASE, [unlink, split])
    assert plan.schema.kinds["Supplier"].title == "name"
    before = {"code": "S-1", "name": "Acme GmbH"}
    out = plan.kinds["Supplier"].migrate(before)
    assert plan.kinds["Supplier"].compute(plan.schema.kinds["Supplier"], before, out) == {}
    assert out == {"code": "S-1", "name": "Acme", "form": "GmbH"}
    failed = plan.kinds["Supplier"].compute(plan.schema.kinds["Supplier"], {"name": "Acme"}, {})
    assert set(failed) == {"name", "form"} and failed["name"][0] == "split.failed"
    with pytest.raises(SchemaChangeError) as refused:
        apply_changes(BASE, [unlink, merge_name, {**split, "attribute": "label"}])
    assert [(i["path"], i["rule"]) for i in refused.value.issues] == [
        ("changes[2].attribute", "change.source")
    ]
