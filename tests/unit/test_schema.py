import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from lorebase.canonical import canonical_json
from lorebase.schema import Attribute, Edit, SchemaError, load_schema

SUPPLY = """\
description: Suppliers, parts and purchasing of Corvane Industries.
kinds:
  Supplier:
    description: A company that supplies parts to Corvane Industries.
    key: [supplier_code]
    title: legal_name
    aliases: [vendor, vendors]
    implements: [Located]
    stewards: [usr_editor]
    attributes:
      supplier_code: {type: string, required: true, pattern: "^S-[0-9]{4}$"}
      legal_name: {type: string, required: true, description: Registered legal name.}
      vat_number: {type: string, unique: true, sensitivity: [confidential]}
      city: {type: string}
      country: {type: string, pattern: "^[A-Z]{2}$"}
      risk_score: {type: integer, min: 0, max: 100, description: Supplier risk from 0 (none) to 100.}
      status: {type: enum, values: [active, inactive, blocked], value_aliases: {inactive: [dormant]}}
      unit_cost: {type: "decimal(10,2)", min: 0}
      since: {type: date}
      reviewed_at: {type: datetime}
      notes: {type: text}
      is_preferred: {type: boolean}
      category: {type: string, resolvable: true, aliases: [type]}
  Part:
    key: [part_number]
    title: name
    attributes:
      part_number: {type: string}
      name: {type: string, required: true}
  Contract:
    key: [contract_id]
    attributes:
      contract_id: {type: string}
      value: {type: "decimal(12,2)"}
      ends_on: {type: date}
  RiskFlag:
    key: [flag_id]
    attributes:
      flag_id: {type: string}
      severity: {type: enum, values: [low, medium, high, critical], required: true}
      reason: {type: text}
      status: {type: enum, values: [open, closed]}
relations:
  supplied_by:
    from: Part
    to: Supplier
    inverse: supplies
    cardinality: many_to_many
    description: A supplier can supply the part.
    required_from: false
    attributes:
      is_primary: {type: boolean}
      lead_time_days: {type: integer, min: 0}
  with_supplier:
    from: Contract
    to: Supplier
    inverse: contracts
    cardinality: many_to_one
  flags:
    from: RiskFlag
    to: Supplier
    inverse: flagged_by
    cardinality: many_to_one
traits:
  Located:
    description: Something with an address.
    attributes:
      city: {type: string}
      country: {type: string}
lenses:
  supplier_risk:
    description: A supplier with its contracts, parts and open risk flags.
    kinds: [Supplier, Contract, Part, RiskFlag]
    traits: []
    relations: [with_supplier, supplied_by, flags]
    depth: 1
    budget_tokens: 2000
    include_schema: true
    include_recent_changes: true
    include_lineage: true
operations:
  update_supplier:
    description: Change the risk score or status of a Supplier.
    parameters:
      key: {type: string, required: true}
      risk_score: {type: integer, min: 0, max: 100}
      status: {type: enum, values: [active, inactive, blocked]}
    edits:
      - {op: update_record, kind: Supplier, key: $key, values: {risk_score: $risk_score, status: $status}}
    review_policy: null
    side_effects: []
    permissions: [operation.execute]
  flag_supplier_risk:
    parameters:
      supplier: {type: string, required: true}
      severity: {type: enum, values: [low, medium, high, critical], required: true}
      reason: {type: text, required: true}
    edits:
      - {op: upsert_record, kind: RiskFlag, key: "RF-${supplier}-${severity}",
         values: {flag_id: "RF-${supplier}-${severity}", severity: $severity, reason: $reason, status: open}}
      - {op: upsert_link, relation: flags, from: "RF-${supplier}-${severity}", to: $supplier}
    review_policy: "severity == 'critical'"
    side_effects: [risk_flag_raised]
"""


def load(text: str):
    return load_schema(text)


def problems_of(document) -> list[str]:
    with pytest.raises(SchemaError) as caught:
        load_schema(document)
    return caught.value.problems


def with_supply(**changes) -> dict:
    document = yaml.safe_load(SUPPLY)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = document
        for part in parents:
            node = node[part]
        node[last] = value
    return document


def test_supply_example_loads():
    schema = load(SUPPLY)
    assert schema.description.startswith("Suppliers, parts")
    assert list(schema.kinds) == ["Supplier", "Part", "Contract", "RiskFlag"]
    supplier = schema.kinds["Supplier"]
    assert supplier.key == ("supplier_code",)
    assert supplier.title == "legal_name"
    assert supplier.aliases == ("vendor", "vendors")
    assert supplier.implements == ("Located",)
    assert supplier.stewards == ("usr_editor",)
    assert list(supplier.attributes)[:3] == ["supplier_code", "legal_name", "vat_number"]  # declaration order
    cost = supplier.attributes["unit_cost"]
    assert (cost.type, cost.precision, cost.scale, cost.type_name) == ("decimal", 10, 2, "decimal(10,2)")
    assert cost.min == Decimal(0) and cost.max is None
    assert supplier.attributes["risk_score"].type_name == "integer"
    assert supplier.attributes["status"].values == ("active", "inactive", "blocked")
    assert supplier.attributes["status"].value_aliases == {"inactive": ("dormant",)}
    assert supplier.attributes["vat_number"].sensitivity == ("confidential",)
    assert supplier.attributes["vat_number"].unique is True
    assert supplier.attributes["category"].resolvable is True
    assert supplier.attributes["category"].aliases == ("type",)
    assert supplier.attributes["notes"].resolvable is None
    assert schema.kinds["Part"].attributes["part_number"].required is True  # key attributes are required

    supplied_by = schema.relations["supplied_by"]
    assert (supplied_by.from_kind, supplied_by.to_kind, supplied_by.inverse) == (
        "Part",
        "Supplier",
        "supplies",
    )
    assert supplied_by.cardinality == "many_to_many" and supplied_by.required_from is False
    assert list(supplied_by.attributes) == ["is_primary", "lead_time_days"]
    assert schema.relation_named("supplied_by") == (supplied_by, "forward")
    assert schema.relation_named("supplies") == (supplied_by, "inverse")
    assert schema.relation_named("nothing") is None
    assert schema.kinds_implementing("Located") == ["Supplier"]
    assert schema.kinds_implementing("Other") == []

    lens = schema.lenses["supplier_risk"]
    assert lens.kinds == ("Supplier", "Contract", "Part", "RiskFlag")
    assert (lens.depth, lens.budget_tokens, lens.include_lineage) == (1, 2000, True)

    update = schema.operations["update_supplier"]
    assert update.permissions == ("operation.execute",)
    assert update.review_policy is None
    assert update.edits == (
        Edit(
            op="update_record",
            kind="Supplier",
            key="$key",
            values={"risk_score": "$risk_score", "status": "$status"},
        ),
    )
    flag = schema.operations["flag_supplier_risk"]
    assert flag.permissions == ("operation.execute",)  # the default
    assert flag.side_effects == ("risk_flag_raised",)
    assert flag.review_policy is not None and flag.review_policy.source == "severity == 'critical'"
    assert flag.edits[1] == Edit(
        op="upsert_link", relation="flags", from_key="RF-${supplier}-${severity}", to_key="$supplier"
    )
    assert flag.parameters["severity"] == Attribute(
        name="severity", type="enum", values=("low", "medium", "high", "critical"), required=True
    )


def test_the_reference_example_loads():
    reference = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(.*?)```", reference, re.DOTALL)
    assert example is not None
    schema = load_schema(example[1])
    assert schema.document == load(SUPPLY).document


def test_normalised_document_loads_to_an_equal_schema():
    schema = load(SUPPLY)
    assert load_schema(schema.document) == schema
    assert load_schema(canonical_json(schema.document).decode()) == schema  # JSON text is YAML too
    assert load_schema(schema.document).document == schema.document
    attribute = schema.document["kinds"]["Supplier"]["attributes"]["unit_cost"]
    assert attribute == {
        "type": "decimal(10,2)",
        "required": False,
        "unique": False,
        "pattern": None,
        "min": 0,
        "max": None,
        "description": "",
        "aliases": [],
        "value_aliases": {},
        "resolvable": None,
        "sensitivity": [],
    }
    assert schema.document["operations"]["update_supplier"]["parameters"]["key"]["default"] is None
    assert schema.document["relations"]["supplied_by"]["from"] == "Part"


def test_normalising_spells_literals_canonically():
    document = with_supply(
        kinds__Supplier__attributes__unit_cost={"type": "decimal( 10 , 2 )", "min": 0.5, "max": "1000"},
        operations__set_cost={
            "parameters": {
                "key": {"type": "string", "required": True},
                "when": {"type": "date", "default": "2024-01-02"},
            },
            "edits": [
                {
                    "op": "update_record",
                    "kind": "Supplier",
                    "key": "$key",
                    "values": {
                        "unit_cost": 12,
                        "notes": "costs $$5 on ${when}",
                        "reviewed_at": "$now",
                        "is_preferred": True,
                    },
                },
                {
                    "op": "upsert_link",
                    "relation": "supplied_by",
                    "from": 42,
                    "to": "$key",
                    "values": {"lead_time_days": 5},
                },
            ],
        },
    )
    schema = load_schema(document)
    cost = schema.document["kinds"]["Supplier"]["attributes"]["unit_cost"]
    assert (cost["type"], cost["min"], cost["max"]) == ("decimal(10,2)", "0.5", 1000)
    edits = schema.document["operations"]["set_cost"]["edits"]
    assert edits[0]["values"] == {
        "unit_cost": "12.00",
        "notes": "costs $$5 on ${when}",
        "reviewed_at": "$now",
        "is_preferred": True,
    }
    assert edits[1] == {
        "op": "upsert_link",
        "relation": "supplied_by",
        "from": "42",
        "to": "$key",
        "values": {"lead_time_days": "5"},
    }
    assert schema.operations["set_cost"].parameters["when"].default == "2024-01-02"
    assert load_schema(schema.document) == schema


def test_empty_document_is_an_empty_schema():
    for document in ("", "{}", {}):
        schema = load_schema(document)
        assert schema.kinds == {} and schema.operations == {}
        assert schema.document == {
            "description": "",
            "kinds": {},
            "relations": {},
            "traits": {},
            "lenses": {},
            "operations": {},
        }


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


def test_null_optional_members_mean_absent():
    document = with_supply(
        kinds__Part__title=None,
        kinds__Part__aliases=None,
        lenses__supplier_risk__traits=None,
        relations__flags__inverse=None,
        relations__flags__cardinality=None,
    )
    schema = load_schema(document)
    assert schema.kinds["Part"].title is None
    assert schema.relations["flags"].inverse is None
    assert schema.relations["flags"].cardinality == "many_to_many"


def test_permissions_default_to_operation_execute():
    assert load_schema(with_supply(operations__update_supplier__permissions=None)).operations[
        "update_supplier"
    ].permissions == ("operation.execute",)
    document = with_supply(operations__update_supplier__permissions=["proposal.create", "pii.read"])
    assert load_schema(document).operations["update_supplier"].permissions == ("proposal.create", "pii.read")
    document = with_supply(operations__update_supplier__permissions=[])
    assert load_schema(document).operations["update_supplier"].permissions == ()


def test_single_key_may_be_a_string_and_several_keys_are_allowed():
    document = with_supply(kinds__Part__key="part_number")
    assert load_schema(document).kinds["Part"].key == ("part_number",)
    document = with_supply(kinds__Contract__key=["contract_id", "ends_on"])
    schema = load_schema(document)
    assert schema.kinds["Contract"].key == ("contract_id", "ends_on")
    assert schema.kinds["Contract"].attributes["ends_on"].required is True


def test_yaml_problems():
    assert problems_of("kinds: [")[0].startswith("<document>: not valid YAML")
    assert problems_of("- a\n- b") == ["<document>: expected a mapping, got a list"]
    duplicated = (
        "kinds:\n  Part:\n    key: [a]\n    attributes:\n      a: {type: string}\n      a: {type: text}\n"
    )
    assert problems_of(duplicated) == ["<document>: line 6: duplicate member 'a'"]
    assert problems_of("kinds:\n  Part:\n    key: [on]\n    attributes: {on: {type: string}}\n") == [
        "kinds.Part.attributes: member True must be a string (quote YAML words such as yes/no/on/off)",
        "kinds.Part.key[0]: expected a string, got True (quote YAML words such as yes, no, on, off)",
        "kinds.Part.key: required; name one or more key attributes",
    ]
