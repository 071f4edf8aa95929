"""Schema documents shared by the schema tests: the supply schema and helpers to vary it."""

from __future__ import annotations

import pytest

from lorebase.schema import SchemaError, load_schema, parse_yaml

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


def load(text: str):  # noqa: ANN201
    return load_schema(text)


def problems_of(document) -> list[str]:
    with pytest.raises(SchemaError) as caught:
        load_schema(document)
    return caught.value.problems


def with_supply(**changes) -> dict:
    document = parse_yaml(SUPPLY)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = document
        for part in parents:
            node = node[part]
        node[last] = value
    return document
