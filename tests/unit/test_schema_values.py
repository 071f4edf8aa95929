import pytest

from lorebase.canonical import ValueProblem
from lorebase.schema import (
    Issue,
    RenderedEdit,
    canonical_record_key,
    key_values,
    load_schema,
    parse_template,
    record_key,
    render_edits,
    validate_parameters,
    validate_values,
    validator,
)
from lorebase.schema.templates import Reference, Template

SCHEMA = load_schema(
    """
kinds:
  Supplier:
    key: [supplier_code]
    attributes:
      supplier_code: {type: string, pattern: "^S-[0-9]{4}$"}
      legal_name: {type: string, required: true}
      risk_score: {type: integer, min: 0, max: 100}
      status: {type: enum, values: [active, inactive, blocked]}
      notes: {type: text}
  PriceLine:
    key: [supplier, part, valid_from]
    attributes:
      supplier: {type: string}
      part: {type: string}
      valid_from: {type: date}
      price: {type: "decimal(10,2)"}
  RiskFlag:
    key: [flag_id]
    attributes:
      flag_id: {type: string}
      severity: {type: enum, values: [low, high, critical], required: true}
      reason: {type: text}
      raised_by: {type: string}
      raised_at: {type: datetime}
      status: {type: enum, values: [open, closed]}
relations:
  flags: {from: RiskFlag, to: Supplier, inverse: flagged_by}
operations:
  update_supplier:
    parameters:
      key: {type: string, required: true}
      risk_score: {type: integer, min: 0, max: 100}
      status: {type: enum, values: [active, inactive, blocked], default: active}
      notes: {type: text}
    edits:
      - {op: update_record, kind: Supplier, key: $key,
         values: {risk_score: $risk_score, status: $status, notes: "${notes} (score ${risk_score})"}}
  flag_supplier_risk:
    parameters:
      supplier: {type: string, required: true}
      severity: {type: enum, values: [low, high, critical], required: true}
      reason: {type: text}
    edits:
      - {op: upsert_record, kind: RiskFlag, key: "RF-${supplier}-${severity}",
         values: {flag_id: "RF-${supplier}-${severity}", severity: $severity, reason: $reason, status: open,
                  raised_by: $principal, raised_at: $now}}
      - {op: upsert_link, relation: flags, from: "RF-${supplier}-${severity}", to: $supplier}
  set_price:
    parameters:
      supplier: {type: string, required: true}
      part: {type: string}
      price: {type: "decimal(10,2)", required: true}
    edits:
      - {op: upsert_record, kind: PriceLine, key: [$supplier, $part, "2024-01-01"], values: {price: $price}}
      - {op: update_record, kind: Supplier, key: $supplier, values: {notes: "price $$${price} set by ${invocation_id}"}}
"""
)
SUPPLIER = SCHEMA.kinds["Supplier"]


def test_validate_values_canonicalises_and_collects_every_issue():
    values, issues = validate_values(
        SUPPLIER.attributes,
        {"supplier_code": "S-0001", "risk_score": "090", "status": "gone", "colour": "red", "notes": None},
        path="edits[0].values",
        partial=False,
    )
    assert values == {"supplier_code": "S-0001", "risk_score": "90", "notes": None}
    assert [(issue.path, issue.rule) for issue in issues] == [
        ("edits[0].values.status", "value.enum"),
        ("edits[0].values.colour", "value.unknown_attribute"),
        ("edits[0].values.legal_name", "value.required"),
    ]
    assert "supplier_code, legal_name, risk_score" in issues[1].message


def test_partial_values_may_leave_out_required_attributes_but_not_clear_them():
    values, issues = validate_values(SUPPLIER.attributes, {"risk_score": 5}, path="", partial=True)
    assert (values, issues) == ({"risk_score": "5"}, [])
    _, issues = validate_values(SUPPLIER.attributes, {"legal_name": None}, path="values", partial=True)
    assert issues == [
        Issue("values.legal_name", "value.required", "legal_name is required and cannot be null")
    ]


def test_validate_parameters():
    operation = SCHEMA.operations["update_supplier"]
    parameters, issues = validate_parameters(operation, {"key": "S-0001", "risk_score": 90})
    assert parameters == {"key": "S-0001", "risk_score": "90", "status": "active"}  # default applied
    assert issues == []
    parameters, issues = validate_parameters(operation, {"risk_score": 101, "colour": "red", "status": None})
    assert parameters == {"status": "active"}
    assert [(issue.path, issue.rule) for issue in issues] == [
        ("parameters.colour", "parameter.unknown"),
        ("parameters.key", "parameter.required"),
        ("parameters.risk_score", "value.max"),
    ]


def test_record_key():
    assert record_key(SUPPLIER, {"supplier_code": "S-0001", "risk_score": 3}) == "S-0001"
    price_line = SCHEMA.kinds["PriceLine"]
    assert record_key(price_line, {"supplier": "S-0001", "part": "P-7", "valid_from": "2024-01-01"}) == (
        "S-0001|P-7|2024-01-01"
    )
    with pytest.raises(ValueProblem, match="valid_from is missing"):
        record_key(price_line, {"supplier": "S-0001", "part": "P-7"})
    with pytest.raises(ValueProblem, match="cannot contain"):
        record_key(price_line, {"supplier": "S|1", "part": "P-7", "valid_from": "2024-01-01"})
    with pytest.raises(ValueProblem) as caught:
        record_key(SUPPLIER, {"supplier_code": "X"})
    assert caught.value.rule == "value.pattern"


def test_key_values_inverts_record_key():
    price_line = SCHEMA.kinds["PriceLine"]
    values = {"supplier": "S-0001", "part": "P-7", "valid_from": "2024-01-01"}
    assert key_values(price_line, record_key(price_line, values)) == values
    assert key_values(SUPPLIER, "S-0001") == {"supplier_code": "S-0001"}
    with pytest.raises(ValueProblem, match="3 parts"):
        key_values(price_line, "S-0001|P-7")


def test_parse_template():
    assert parse_template("$key") == Reference("key")
    assert parse_template("RF-${supplier}-${severity}") == Template(
        ("RF-", Reference("supplier"), "-", Reference("severity"))
    )
    assert parse_template("$$key") == Template(("$key",))
    assert parse_template("costs $$5") == Template(("costs $5",))
    assert parse_template("$$") == Template(("$",))
    assert parse_template("") == Template(())
    for bad in ("$", "a $b", "${}", "${Key}", "$key ", "${key"):
        with pytest.raises(ValueError):
            parse_template(bad)


def render(name, parameters):
    return render_edits(
        SCHEMA.operations[name],
        parameters,
        invocation_id="inv_1",
        principal="usr_ann",
        now="2024-05-01T12:00:00+02:00",
    )


def test_render_edits_substitutes_parameters_and_builtins():
    edits = render(
        "flag_supplier_risk", {"supplier": "S-0001", "severity": "critical", "reason": "late deliveries"}
    )
    assert edits == [
        RenderedEdit(
            op="upsert_record",
            kind="RiskFlag",
            key="RF-S-0001-critical",
            values={
                "flag_id": "RF-S-0001-critical",
                "severity": "critical",
                "reason": "late deliveries",
                "status": "open",
                "raised_by": "usr_ann",
                "raised_at": "2024-05-01T10:00:00Z",
            },
        ),
        RenderedEdit(op="upsert_link", relation="flags", from_key="RF-S-0001-critical", to_key="S-0001"),
    ]


def test_render_edits_drops_values_of_absent_parameters():
    (edit,) = render("update_supplier", {"key": "S-0001", "risk_score": "90"})
    assert edit.values == {"risk_score": "90"}  # status and notes not given: left unchanged
    (edit,) = render("update_supplier", {"key": "S-0001", "risk_score": "90", "notes": "ok", "status": None})
    assert edit.values == {"risk_score": "90", "notes": "ok (score 90)"}
    (edit,) = render("update_supplier", {"key": "S-0001", "status": "blocked"})
    assert edit.values == {"status": "blocked"}


def test_render_edits_list_keys_and_dollars():
    edits = render("set_price", {"supplier": "S-0001", "part": "P-7", "price": "24.00"})
    assert edits[0].key == "S-0001|P-7|2024-01-01"
    assert edits[0].values == {"price": "24.00"}
    assert edits[1].values == {"notes": "price $24.00 set by inv_1"}


def test_render_edits_refuses_a_key_without_its_parameter():
    with pytest.raises(ValueError, match=r"operations.set_price.edits\[0\].key needs parameter 'part'"):
        render("set_price", {"supplier": "S-0001", "price": "1.00"})
    with pytest.raises(ValueError, match="needs parameter 'supplier'"):
        render("flag_supplier_risk", {"severity": "low"})


def test_rendered_values_validate_against_the_kind():
    edits = render("flag_supplier_risk", {"supplier": "S-0001", "severity": "high"})
    values, issues = validate_values(
        SCHEMA.kinds["RiskFlag"].attributes, edits[0].values, path="edits[0].values", partial=False
    )
    assert issues == []
    assert values["raised_at"] == "2024-05-01T10:00:00Z"


def test_one_validator_per_attribute_mapping_and_paths_joined_for_issues():
    """A load checks its Records with one Validator per Kind (its steps made once), known by the
    mapping's identity; an issue's path is the item's path and suffix, as validate_values gives it."""
    kind = SCHEMA.kinds["Supplier"]
    checker = validator(kind.attributes, partial=True)
    assert validator(kind.attributes, partial=True) is checker
    assert validator(dict(kind.attributes), partial=True) is not checker
    assert validator(kind.attributes, partial=False) is not checker
    values = {"supplier_code": "S-1001", "risk_score": "101", "legal_name": None, "color": "red"}
    canonical, issues = checker.check(values, "records[7]", ".values")
    assert (canonical, issues) == validate_values(
        kind.attributes, values, path="records[7].values", partial=True
    )
    assert [issue.path for issue in issues] == [
        "records[7].values.risk_score",
        "records[7].values.color",
        "records[7].values.legal_name",
    ]


def test_the_key_of_canonical_values_is_record_key():
    for name, values in (
        ("Supplier", {"supplier_code": "S-1001"}),
        ("PriceLine", {"supplier": "S-1", "part": "P-2", "valid_from": "2024-01-31"}),
    ):
        kind = SCHEMA.kinds[name]
        canonical, issues = validate_values(kind.attributes, values, path="", partial=True)
        assert not issues
        assert canonical_record_key(kind, canonical) == record_key(kind, canonical)
