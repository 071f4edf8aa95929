"""Derivations: the expression compiler (every load-time problem) and the evaluator."""

from __future__ import annotations

from typing import Any

import pytest

from lorebase.schema import load_schema
from lorebase.schema.derivations import Aggregate
from tests.unit.schema_documents import problems_of, with_supply

NEIGHBOURS = {
    "flagged_by": [
        {"flag_id": "F1", "severity": "high", "status": "open"},
        {"flag_id": "F2", "severity": "low", "status": "closed"},
        {"flag_id": "F3", "severity": "critical", "status": "open"},
    ],
    "supplies": [{"part_number": "P1", "name": "Seal"}, {"part_number": "P2", "name": "Valve"}],
    "contracts": [
        {"contract_id": "C1", "value": "100.50", "ends_on": "2025-01-31"},
        {"contract_id": "C2", "value": "20.25", "ends_on": "2024-06-30"},
        {"contract_id": "C3"},
    ],
}


def supplier_with(**derived: str | dict[str, Any]) -> dict[str, Any]:
    document = with_supply()
    attributes = document["kinds"]["Supplier"]["attributes"]
    for name, spec in derived.items():
        attributes[name] = spec if isinstance(spec, dict) else {"type": "integer", "derived": spec}
    return document


def evaluate(type_: str, source: str, values: dict[str, Any] | None = None, neighbours=None) -> Any:
    schema = load_schema(supplier_with(d={"type": type_, "derived": source}))
    derivation = schema.kinds["Supplier"].derivations["d"]
    return derivation.evaluate(values or {}, NEIGHBOURS if neighbours is None else neighbours)


@pytest.mark.parametrize(
    ("type_", "source", "values", "expected"),
    [
        ("integer", "count(flagged_by)", {}, "3"),
        ("integer", "count(flagged_by where status == 'open')", {}, "2"),
        ("integer", "count(flagged_by where severity in ['high', 'critical'] and status == 'open')", {}, "2"),
        ("integer", "count(supplies)", {}, "2"),
        ("decimal(12,2)", "sum(contracts.value)", {}, "120.75"),
        ("decimal(12,2)", "sum(contracts.value where ends_on < '2025-01-01')", {}, "20.25"),
        ("decimal(12,2)", "max(contracts.value)", {}, "100.50"),
        ("decimal(12,2)", "min(contracts.value)", {}, "20.25"),
        ("decimal(12,2)", "round(avg(contracts.value), 2)", {}, "60.38"),  # half away from zero
        ("decimal(12,2)", "avg(contracts.value)", {}, "60.38"),  # 60.375 has 3 digits: no value
        ("date", "max(contracts.ends_on)", {}, "2025-01-31"),
        ("integer", "risk_score * 2 + 1", {"risk_score": "40"}, "81"),
        ("integer", "risk_score + 1", {}, None),  # null in, null out
        ("integer", "coalesce(risk_score, 0) + 1", {}, "1"),
        ("integer", "risk_score / 0", {"risk_score": "4"}, None),  # an evaluation error: absent
        ("integer", "risk_score / 3", {"risk_score": "4"}, None),  # not an integer: absent
        ("integer", "round(risk_score / 3)", {"risk_score": "5"}, "2"),
        ("integer", "-risk_score", {"risk_score": "5"}, "-5"),
        ("integer", "len(legal_name)", {"legal_name": "Acme"}, "4"),
        ("integer", "abs(0 - risk_score)", {"risk_score": "5"}, "5"),
        ("string", "upper(country) + '-' + lower(city)", {"country": "pl", "city": "Gdansk"}, "PL-gdansk"),
        ("string", "'high' if risk_score > 80 else 'low'", {"risk_score": "90"}, "high"),
        ("string", "'high' if risk_score > 80 else 'low'", {}, "low"),
        ("boolean", "risk_score >= 80 or count(flagged_by where status == 'open') > 1", {}, True),
        ("boolean", "not is_preferred", {"is_preferred": True}, False),
        ("boolean", "risk_score == null", {}, True),
        ("enum", "'active' if count(flagged_by) == 0 else 'blocked'", {}, "blocked"),
        ("string", "null", {}, None),
    ],
)
def test_evaluate(type_: str, source: str, values: dict[str, Any], expected: Any) -> None:
    if type_ == "enum":
        document = supplier_with(d={"type": "enum", "values": ["active", "blocked"], "derived": source})
        derivation = load_schema(document).kinds["Supplier"].derivations["d"]
        assert derivation.evaluate(values, NEIGHBOURS) == expected
        return
    if source == "avg(contracts.value)":
        assert evaluate(type_, source, values) is None
        return
    assert evaluate(type_, source, values) == expected


def test_aggregates_over_no_neighbours() -> None:
    assert evaluate("integer", "count(flagged_by)", neighbours={}) == "0"
    assert evaluate("decimal(12,2)", "sum(contracts.value)", neighbours={}) == "0.00"
    assert evaluate("decimal(12,2)", "max(contracts.value)", neighbours={}) is None
    assert evaluate("decimal(12,2)", "coalesce(max(contracts.value), 0)", neighbours={}) == "0.00"


def test_what_a_derivation_reads() -> None:
    schema = load_schema(
        supplier_with(
            d="risk_score + count(flagged_by where status == 'open') + count(flagged_by where severity == 'low')"
        )
    )
    derivation = schema.kinds["Supplier"].derivations["d"]
    assert derivation.reads == ("risk_score",)
    assert derivation.aggregates == (
        Aggregate("flagged_by", "flags", "inverse", "RiskFlag", ("severity", "status")),
    )
    part = load_schema(
        with_supply(
            kinds__Part__attributes__supplier_count={"type": "integer", "derived": "count(supplied_by)"}
        )
    ).kinds["Part"]
    assert part.derivations["supplier_count"].aggregates == (
        Aggregate("supplied_by", "supplied_by", "forward", "Supplier", ()),
    )


def test_the_normalised_document_keeps_the_derivation() -> None:
    schema = load_schema(supplier_with(open_flags="count(flagged_by where status == 'open')"))
    attribute = schema.document["kinds"]["Supplier"]["attributes"]["open_flags"]
    assert attribute["derived"] == "count(flagged_by where status == 'open')"
    assert "derived" not in schema.document["relations"]["supplied_by"]["attributes"]["is_primary"]
    assert load_schema(schema.document) == schema


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "a Derivation must be a non-empty expression string"),
        ("count(", "invalid expression"),
        ("nope + 1", "unknown name 'nope'; the Attributes of Supplier are: supplier_code"),
        ("other + 1", "other is derived: a Derivation cannot read another derived Attribute"),
        ("count(nothing)", "unknown Relation 'nothing'; the Relations of Supplier are: supplies, contracts"),
        ("count(supplied_by)", "supplied_by reads Part -> Supplier, not from Supplier"),
        ("supplies + 1", "supplies is a Relation: aggregate it"),
        ("supplies.name", "supplies.name reads neighbours: aggregate it"),
        ("sum(supplies.name)", "sum() applies to numbers; name is string"),
        ("sum(supplies.weight)", "Part has no Attribute 'weight'"),
        ("count(supplies.name)", "count() takes a Relation"),
        ("max(supplies)", "max() takes a neighbour Attribute"),
        ("count(flagged_by where status == 'opne')", "'opne' is not a value of status (open, closed)"),
        (
            "count(flagged_by where risk_score > 1)",
            "unknown name 'risk_score'; the Attributes of neighbours in flagged_by",
        ),
        (
            "count(flagged_by where count(flagged_by) > 1)",
            "an aggregate cannot be used inside a `where` condition",
        ),
        ("count(flagged_by, 1, 2)", "count() takes one Relation"),
        ("legal_name", "the Derivation gives a string, but d is integer"),
        ("risk_score > 1", "the Derivation gives a boolean, but d is integer"),
        ("legal_name - 1", "`-` mixes number and string"),
        ("legal_name * legal_name", "`*` does not apply to a string"),
        ("risk_score % 2", "operator Mod is not allowed"),
        ("risk_score ** 2", "operator Pow is not allowed"),
        ("risk_score is None", "operator Is is not allowed; compare with == null"),
        ("__import__('os')", "unknown function '__import__'"),
        ("__import__('os').system('true')", "only the functions"),
        ("legal_name.upper()", "only the functions"),
        ("round(risk_score, n=2)", "round() takes positional arguments only"),
        ("round(risk_score, risk_score)", "the digits of round() are a whole number from 0 to 38"),
        ("round(legal_name)", "round() applies to a number, not to a string"),
        ("len(risk_score)", "len() applies to a string, not to a number"),
        ("coalesce()", "coalesce() takes one or more arguments"),
        ("coalesce(risk_score, legal_name)", "coalesce() mixes number and string"),
        ("1 if is_preferred else 'x'", "`a if cond else b` mixes number and string"),
        ("[1, 2]", "a list may only follow `in`"),
        ("risk_score where 1", "a list may only follow `in` or `not in`, and `where` only an aggregate"),
        ("risk_score[0]", "a subscript is not allowed in a Derivation"),
        ("(lambda: 1)()", "only the functions"),
        ("~risk_score", "operator ~ is not allowed"),
        ("-legal_name", "a sign applies to numbers, not to a string"),
        ("b'x'", "the literal b'x' is not allowed"),
        ("x" * 2001, "a Derivation is limited to 2000 characters"),
    ],
)
def test_every_bad_derivation_is_a_problem_at_its_path(source: str, message: str) -> None:
    document = supplier_with(
        d={"type": "integer", "derived": source}, other={"type": "integer", "derived": "count(supplies)"}
    )
    problems = problems_of(document)
    assert len(problems) == 1, problems
    path, text = problems[0].split(": ", 1)
    assert path == "kinds.Supplier.attributes.d.derived"
    assert text.startswith(message) or message in text, text


def test_where_derived_members_do_not_apply() -> None:
    document = with_supply()
    supplier = document["kinds"]["Supplier"]["attributes"]
    supplier["supplier_code"]["derived"] = "upper(legal_name)"
    supplier["a"] = {"type": "integer", "required": True, "derived": "count(supplies)"}
    supplier["b"] = {"type": "integer", "unique": True, "derived": "count(supplies)"}
    supplier["c"] = {"type": "integer", "derived": 3}
    document["relations"]["supplied_by"]["attributes"]["is_primary"]["derived"] = "true"
    document["traits"]["Located"]["attributes"]["city"]["derived"] = "'x'"
    document["operations"]["update_supplier"]["parameters"]["key"]["derived"] = "'x'"
    problems = problems_of(document)
    assert sorted(problems) == sorted(
        [
            "kinds.Supplier.attributes.supplier_code.derived: key attributes cannot be derived",
            "kinds.Supplier.attributes.supplier_code.required: a derived Attribute cannot be required "
            "(its value is absent when it cannot be computed)",
            "kinds.Supplier.attributes.a.required: a derived Attribute cannot be required "
            "(its value is absent when it cannot be computed)",
            "kinds.Supplier.attributes.b.unique: a derived Attribute cannot be unique",
            "kinds.Supplier.attributes.c.derived: expected a string, got a number",
            "relations.supplied_by.attributes.is_primary.derived: only Attributes of Kinds can be derived",
            "traits.Located.attributes.city.derived: only Attributes of Kinds can be derived",
            "operations.update_supplier.parameters.key.derived: only Attributes of Kinds can be derived",
        ]
    )


def test_an_operation_cannot_set_a_derived_attribute() -> None:
    document = supplier_with(part_count="count(supplies)")
    document["operations"]["update_supplier"]["edits"][0]["values"]["part_count"] = 3
    assert problems_of(document) == [
        "operations.update_supplier.edits[0].values.part_count: part_count is derived "
        "(computed from its Derivation 'count(supplies)'); edits cannot set it"
    ]


def test_a_write_supplying_a_derived_value_is_an_issue() -> None:
    from lorebase.schema import validate_values

    schema = load_schema(supplier_with(part_count="count(supplies)"))
    attributes = schema.kinds["Supplier"].attributes
    for value in (3, None):
        _, issues = validate_values(attributes, {"part_count": value}, path="records[0].values", partial=True)
        assert [(i.path, i.rule) for i in issues] == [("records[0].values.part_count", "value.derived")]
        assert "computed from its Derivation (count(supplies))" in issues[0].message
    canonical, issues = validate_values(attributes, {"part_count": 3}, path="", partial=True, stored=True)
    assert canonical == {"part_count": "3"} and issues == []


def test_a_result_that_is_not_a_valid_value_is_absent() -> None:
    document = supplier_with(d={"type": "integer", "min": 0, "derived": "0 - risk_score"})
    derivation = load_schema(document).kinds["Supplier"].derivations["d"]
    assert derivation.evaluate({"risk_score": "5"}, {}) is None
    assert derivation.evaluate({"risk_score": "0"}, {}) == "0"
    assert derivation.evaluate({"risk_score": "not a number"}, {}) is None  # a damaged stored value


def test_the_reference_derivations_load() -> None:
    import re
    from pathlib import Path

    import yaml

    reference = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    section = reference.split("## Derived Attributes", 1)[1]
    snippet = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.DOTALL)[1])  # type: ignore[index]
    document = with_supply()
    document["kinds"]["Supplier"]["attributes"].update(snippet["kinds"]["Supplier"]["attributes"])
    supplier = load_schema(document).kinds["Supplier"]
    assert list(supplier.derivations) == [
        "part_count",
        "open_flags",
        "contract_value",
        "last_contract_end",
        "label",
    ]
