import re
from decimal import Decimal
from pathlib import Path

from lorebase.canonical import canonical_json
from lorebase.schema import Attribute, Edit, load_schema
from tests.unit.schema_documents import SUPPLY, load, problems_of, with_supply


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
        "derived": None,
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
            "sources": {},
        }


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
    assert problems_of("kinds:\n  Part:\n    key: [true]\n    attributes: {false: {type: string}}\n") == [
        "kinds.Part.attributes: member False must be a string (quote YAML's true, false, null and numbers)",
        "kinds.Part.key[0]: expected a string, got True (quote true and false where they are words)",
        "kinds.Part.key: required; name one or more key attributes",
    ]


def test_yaml_words_are_text_as_yaml_1_2_reads_them():
    """YAML 1.1's booleans yes/no/on/off/y/n are words here: `NO` is Norway's code, not false."""
    document = (
        "kinds:\n  Part:\n    key: [on]\n    attributes:\n      on: {type: string}\n"
        "      country: {type: enum, values: [NO, SE, yes, off], value_aliases: {NO: [Norway]}}\n"
        "      active: {type: boolean, required: true}\n"
    )
    part = load_schema(document).kinds["Part"]
    assert part.key == ("on",)
    assert part.attributes["country"].values == ("NO", "SE", "yes", "off")
    assert part.attributes["country"].value_aliases == {"NO": ("Norway",)}
    assert part.attributes["active"].required is True
