import pytest

from lorebase.schema import SchemaError
from tests.unit.schema_documents import problems_of, with_supply

BAD = """\
descripton: typo at the top
kinds:
  Supplier:
    key: [supplier_code, missing]
    title: name
    implements: [Located, Ghost]
    atributes: {}
    attributes:
      supplier_code: {type: string, required: false}
      risk_score: {type: int}
      cost: {type: "decimal(40,2)"}
      cost2: {type: "decimal(5,6)"}
      status: {type: enum}
      level: {type: integer, min: 10, max: 1, pattern: "[", sensitivity: [secret]}
      city: {type: text}
      Bad: {type: string, requird: true}
  lower:
    key: x
    attributes:
      x: {type: string}
relations:
  supplied_by: {from: Part, to: Supplier, inverse: supplied_by, cardinality: several}
  other: {from: Supplier, to: Supplier, inverse: supplies}
  third: {from: Supplier, to: Supplier, inverse: supplies}
traits:
  Located:
    attributes:
      city: {type: string}
      country: {type: string}
lenses:
  l1: {kinds: [Nope], relations: [supplies, nada], depth: -1}
operations:
  op1:
    parameters:
      key: {type: string, required: true}
      now: {type: string}
      level: {type: enum, values: [a, b], default: c}
    edits:
      - {op: update_record, kind: Supplier, key: $key,
         values: {risk_score: $riskscore, nope: 1, supplier_code: x, city: "costs $5", level: "12"}}
      - {op: frobnicate}
      - {op: upsert_link, relation: other, from: $key, to: "${key}", kind: Supplier}
      - {op: delete_record, kind: Ghost, key: "${nothing}"}
    review_policy: "__import__('os').system('true')"
    side_effects: [Bad-Name]
    permissions: [operation.execute, root]
  op2:
    parameters:
      severity: {type: enum, values: [low, critical]}
    review_policy: "severity == 'critcal'"
"""


def test_a_bad_document_reports_every_problem():
    problems = problems_of(BAD)
    assert "kinds.Supplier.attributes.risk_score.type: unknown type 'int'" in problems
    paths = [problem.split(": ", 1)[0] for problem in problems]
    expected = [
        "descripton",
        "kinds.Supplier.atributes",
        "kinds.Supplier.attributes.risk_score.type",
        "kinds.Supplier.attributes.cost.type",
        "kinds.Supplier.attributes.cost2.type",
        "kinds.Supplier.attributes.status.values",
        "kinds.Supplier.attributes.level.pattern",  # twice: not for integers, and it does not compile
        "kinds.Supplier.attributes.level",  # min > max
        "kinds.Supplier.attributes.level.sensitivity[0]",
        "kinds.Supplier.attributes.Bad",
        "kinds.Supplier.attributes.Bad.requird",
        "kinds.Supplier.attributes.supplier_code.required",
        "kinds.Supplier.key[1]",
        "kinds.Supplier.title",
        "kinds.Supplier.attributes.city.type",  # Located declares it a string
        "kinds.Supplier.implements[0]",  # country is missing
        "kinds.Supplier.implements[1]",
        "kinds.lower",
        "relations.supplied_by.from",
        "relations.supplied_by.cardinality",
        "relations.supplied_by.inverse",
        "relations.third.inverse",
        "lenses.l1.kinds[0]",
        "lenses.l1.relations[1]",
        "lenses.l1.depth",
        "operations.op1.parameters.level.default",
        "operations.op1.parameters.now",
        "operations.op1.edits[0].values.risk_score",
        "operations.op1.edits[0].values.nope",
        "operations.op1.edits[0].values.supplier_code",
        "operations.op1.edits[0].values.city",
        "operations.op1.edits[0].values.level",
        "operations.op1.edits[1].op",
        "operations.op1.edits[2].kind",
        "operations.op1.edits[3].kind",
        "operations.op1.edits[3].key",
        "operations.op1.review_policy",
        "operations.op1.side_effects[0]",
        "operations.op1.permissions[1]",
        "operations.op2.review_policy",
    ]
    assert sorted(set(paths)) == sorted(expected)
    assert paths.count("kinds.Supplier.attributes.level.pattern") == 2


def test_schema_error_joins_problems():
    error = SchemaError(["a: one", "b: two"])
    assert str(error) == "a: one; b: two"
    assert error.problems == ["a: one", "b: two"]
    assert isinstance(error, ValueError)


def test_problem_messages_say_what_is_wrong():
    problems = problems_of(BAD)
    assert "descripton: unknown member; did you mean 'description'?" in problems
    assert "kinds.Supplier.attributes.cost.type: decimal precision must be 1..38, got 40" in problems
    assert "relations.third.inverse: 'supplies' is already the inverse of other" in problems
    assert "operations.op2.review_policy: 'critcal' is not a value of severity (low, critical)" in problems
    assert any(p.startswith("operations.op1.edits[0].values.city: stray '$'") for p in problems)
    assert any(p.startswith("operations.op1.edits[0].values.nope: unknown attribute") for p in problems)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        (
            {"kinds__Part__attributes__name__values": ["a"]},
            "kinds.Part.attributes.name.values: values apply to enum only",
        ),
        (
            {"kinds__Part__attributes__name__default": "x"},
            "kinds.Part.attributes.name.default: unknown member",
        ),
        (
            {"kinds__Part__attributes__name__min": -1},
            "kinds.Part.attributes.name.min: a length bound must be",
        ),
        ({"kinds__Part__attributes__name__max": "ten"}, "kinds.Part.attributes.name.max: expected a number"),
        (
            {"kinds__Contract__attributes__ends_on__min": 1},
            "kinds.Contract.attributes.ends_on.min: min applies to",
        ),
        (
            {"kinds__Supplier__attributes__risk_score__max": 1.5},
            "kinds.Supplier.attributes.risk_score.max: an integer bound",
        ),
        (
            {"kinds__Supplier__attributes__status__values": [True, "x"]},
            "kinds.Supplier.attributes.status.values[0]: expected a string, got True (quote",
        ),
        (
            {"kinds__Supplier__attributes__status__values": ["x", "x"]},
            "kinds.Supplier.attributes.status.values[1]: 'x' is listed twice",
        ),
        (
            {"kinds__Supplier__attributes__status__value_aliases": {"gone": ["old"]}},
            "kinds.Supplier.attributes.status.value_aliases.gone: 'gone' is not one of",
        ),
        (
            {"kinds__Supplier__attributes__status__comparatives": {"worse": "gt"}},
            "kinds.Supplier.attributes.status.comparatives: comparatives apply to ordered types",
        ),
        (
            {"kinds__Supplier__attributes__risk_score__comparatives": {"riskier": "more"}},
            "kinds.Supplier.attributes.risk_score.comparatives.riskier: unknown operator 'more'; expected one of lt, gt, min, max",
        ),
        (
            {"kinds__Supplier__attributes__risk_score__comparatives": {"more risky": "gt"}},
            "kinds.Supplier.attributes.risk_score.comparatives.more risky: 'more risky' must be one lower-case word",
        ),
        (
            {"kinds__Supplier__attributes__risk_score__comparatives": ["riskier"]},
            "kinds.Supplier.attributes.risk_score.comparatives: expected a mapping, got a list",
        ),
        (
            {"kinds__Supplier__attributes__status__type": "decimal"},
            "kinds.Supplier.attributes.status.type: unknown type 'decimal' (write decimal(p,s)",
        ),
        (
            {"kinds__Supplier__attributes__status__type": None},
            "kinds.Supplier.attributes.status.type: required",
        ),
        (
            {"kinds__Supplier__attributes__notes": "text"},
            "kinds.Supplier.attributes.notes: expected a mapping, got a string",
        ),
        ({"kinds__Supplier__key": []}, "kinds.Supplier.key: required"),
        ({"kinds__Part__aliases": ["Vendor"]}, "kinds.Part.aliases[0]: 'Vendor' already names Supplier"),
        ({"kinds__Part__aliases": ["supplier"]}, "kinds.Part.aliases[0]: 'supplier' already names Supplier"),
        ({"relations__flags__to": "Nobody"}, "relations.flags.to: unknown Kind 'Nobody'"),
        ({"relations__flags__from": None}, "relations.flags.from: required"),
        (
            {"relations__flags__inverse": "supplied_by"},
            "relations.flags.inverse: 'supplied_by' is already the Relation supplied_by",
        ),
        (
            {"relations__flags__inverse": "Flagged"},
            "relations.flags.inverse: an inverse name 'Flagged' must match",
        ),
        (
            {"lenses__supplier_risk__traits": ["Ghost"]},
            "lenses.supplier_risk.traits[0]: unknown Trait 'Ghost'",
        ),
        (
            {"lenses__supplier_risk__budget_tokens": 0},
            "lenses.supplier_risk.budget_tokens: must be at least 1",
        ),
        (
            {"lenses__supplier_risk__include_schema": "yes"},
            "lenses.supplier_risk.include_schema: expected true or false",
        ),
        (
            {"operations__update_supplier__edits": {"op": "x"}},
            "operations.update_supplier.edits: expected a list of edits",
        ),
        (
            {"operations__update_supplier__review_policy": "risk_score >"},
            "operations.update_supplier.review_policy: invalid expression",
        ),
        (
            {"operations__update_supplier__review_policy": "nobody == 1"},
            "operations.update_supplier.review_policy: unknown name 'nobody'",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "delete_record", "kind": "Supplier", "key": "$key", "values": {"notes": "x"}}
                ]
            },
            "operations.update_supplier.edits[0].values.notes: delete_record takes no values",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "update_record", "kind": "Supplier", "values": {}}
                ]
            },
            "operations.update_supplier.edits[0].key: required",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "update_record", "kind": "Supplier", "key": ["$key", "x"]}
                ]
            },
            "operations.update_supplier.edits[0].key: a list key needs one template per key attribute (1)",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "upsert_link", "relation": "supplies", "from": "$key", "to": "x"}
                ]
            },
            "operations.update_supplier.edits[0].relation: unknown Relation 'supplies' (use its forward name)",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "update_record", "kind": "Supplier", "key": "${Key}"}
                ]
            },
            "operations.update_supplier.edits[0].key: ${Key} in '${Key}' does not name a parameter",
        ),
        (
            {
                "operations__update_supplier__edits": [
                    {"op": "update_record", "kind": "Supplier", "key": "$key", "values": {"risk_score": 101}}
                ]
            },
            "operations.update_supplier.edits[0].values.risk_score: must be at most 100, got 101 (value.max)",
        ),
        (
            {"operations__update_supplier__edits": [{"kind": "Supplier", "key": "$key"}]},
            "operations.update_supplier.edits[0].op: required",
        ),
        (
            {"operations__update_supplier__side_effects": "risk"},
            "operations.update_supplier.side_effects: expected a list of strings, got a string",
        ),
    ],
)
def test_each_rule(changes, problem):
    problems = problems_of(with_supply(**changes))
    assert any(found.startswith(problem) for found in problems), problems
