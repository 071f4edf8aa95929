"""Schema inference from samples (lorebase.schema.inference): types, keys, enums, patterns, candidate
Relations, names in the schema's grammar; a change set that loads; the same bytes every time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lorebase.schema.changes import apply_changes
from lorebase.schema.inference import SampleError, attribute_name, infer, kind_name, read_samples

SUPPLY = Path(__file__).resolve().parents[2] / "examples" / "supply" / "data.json"

SUPPLIERS = "supplier_code,Legal Name,tier,status,since,checked_at,rate,preferred\n" + "".join(
    f"S-{1000 + i},Supplier {i},{1 + i % 3},{['active', 'blocked'][i % 2]},2024-01-{1 + i:02d},"
    f"2024-05-01T10:00:00Z,{i}.{i % 10}5,{'true' if i % 2 else 'false'}\n"
    for i in range(12)
)
PARTS = "part_number,name,supplier_code,notes\n" + "".join(
    f"P-{i},Part {i},S-{1000 + i % 12},\n" for i in range(5)
)


def test_types_keys_enums_and_patterns_from_a_csv() -> None:
    inference = infer(read_samples("data/suppliers.csv", SUPPLIERS))
    (kind,) = inference.changes
    assert kind["op"] == "add_kind" and kind["kind"] == "Supplier"
    definition = kind["definition"]
    assert definition["key"] == ["supplier_code"] and definition["title"] == "legal_name"
    attributes = definition["attributes"]
    assert attributes["supplier_code"] == {"type": "string", "required": True, "pattern": "^S-[0-9]{4}$"}
    assert attributes["tier"]["type"] == "integer"
    assert attributes["status"] == {"type": "enum", "values": ["active", "blocked"], "required": True}
    assert attributes["since"]["type"] == "date" and attributes["checked_at"]["type"] == "datetime"
    assert attributes["rate"]["type"] == "decimal(8,2)"  # 2 fraction digits; 2 + 4 integer digits
    assert attributes["preferred"]["type"] == "boolean"
    assert "Supplier.legal_name is the column 'Legal Name'" in inference.notes
    apply_changes({}, inference.changes)  # a change set that loads


def test_a_foreign_key_column_is_a_candidate_relation_and_empty_columns_are_optional() -> None:
    samples = read_samples("suppliers.csv", SUPPLIERS) + read_samples("parts.csv", PARTS)
    inference = infer(samples)
    relation = inference.changes[-1]
    assert relation == {
        "op": "add_relation",
        "relation": "supplier",
        "definition": {
            "from": "Part",
            "to": "Supplier",
            "cardinality": "many_to_one",
            "description": "Part.supplier_code names a Supplier by its key.",
        },
    }
    part = inference.changes[1]["definition"]
    assert part["attributes"]["notes"] == {"type": "string"}  # never filled: not required
    assert "pattern" not in part["attributes"]["part_number"]  # five values are too few for one
    schema = apply_changes({}, inference.changes).schema
    assert schema.relations["supplier"].to_kind == "Supplier"


def test_the_import_format_gives_kinds_and_relations_from_its_links() -> None:
    inference = infer(read_samples(str(SUPPLY), SUPPLY.read_text()))
    schema = apply_changes({}, inference.changes).schema
    assert list(schema.kinds) == ["Contract", "Part", "Plant", "PurchaseOrder", "RiskFlag", "Supplier"]
    supplied_by = schema.relations["supplied_by"]
    assert (supplied_by.from_kind, supplied_by.to_kind, supplied_by.cardinality) == (
        "Part",
        "Supplier",
        "many_to_many",
    )
    assert list(supplied_by.attributes) == ["is_primary", "lead_time_days"]
    assert schema.relations["for_part"].cardinality == "many_to_one"
    assert list(schema.kinds["Supplier"].key) == ["supplier_code"]


def test_json_lines_and_an_object_of_lists() -> None:
    lines = "\n".join(json.dumps({"sku": f"I{i}", "qty": i, "tags": ["a"]}) for i in range(3))
    (sample,) = read_samples("items.jsonl", lines)
    assert sample.name == "items" and len(sample.rows) == 3
    samples = read_samples("shop.json", json.dumps({"orders": [{"id": 1}], "order_lines": [{"id": 2}]}))
    assert [kind_name(s.name) for s in samples] == ["Order", "OrderLine"]
    with pytest.raises(SampleError, match="give a list of objects"):
        read_samples("bad.json", "3")
    with pytest.raises(SampleError, match=r"bad.jsonl:2: not JSON"):
        read_samples("bad.jsonl", '{"a": 1}\n{oops')
    with pytest.raises(SampleError, match="give a .csv"):
        read_samples("table.parquet", "")


def test_names_follow_the_schema_grammar() -> None:
    assert kind_name("purchase_orders") == "PurchaseOrder" and kind_name("companies") == "Company"
    assert kind_name("2024 sales") == "K2024Sale" and kind_name("addresses") == "Address"
    assert attribute_name("Legal Name") == "legal_name" and attribute_name("unitCost") == "unit_cost"
    assert attribute_name("2nd line") == "a_2nd_line" and attribute_name("%") == "value"


def test_the_same_samples_give_the_same_bytes() -> None:
    first = json.dumps(infer(read_samples("suppliers.csv", SUPPLIERS)).document())
    again = json.dumps(infer(read_samples("suppliers.csv", SUPPLIERS)).document())
    assert first == again
