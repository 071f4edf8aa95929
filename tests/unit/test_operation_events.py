"""lorebase.operation_events.revealed: cleared values re-rendered from the invocation, or nothing."""

from __future__ import annotations

from typing import Any

from lorebase.operation_events import revealed
from lorebase.schema import load_schema
from tests.integration.test_webhook_clearances import EMAIL, SCHEMA


def test_a_changed_operation_reveals_nothing() -> None:
    """When the Operation renders other edits than the stored ones (changed since), the cleared
    webhook gets the stored, masked edit rather than a guess."""
    event = {
        "type": "operation.person_hired",
        "operation": "hire",
        "invocation_id": "inv_1",
        "edits": [
            {
                "op": "upsert_record",
                "kind": "Person",
                "key": "P-2",
                "values": {"pid": "P-2", "email": "***", "salary": "***", "city": "Oslo"},
            }
        ],
    }
    schema = load_schema(SCHEMA)
    invocation: dict[str, Any] = {
        "id": "inv_1",
        "principal": "usr_admin",
        "parameters": {"pid": "P-2", "email": EMAIL, "salary": 1, "city": "Oslo"},
        "created_at": "2026-11-30T00:00:00Z",
    }
    assert revealed(event, schema, invocation, ["pii"])["edits"][0]["values"]["email"] == EMAIL
    moved = {**invocation, "parameters": {**invocation["parameters"], "city": "Bergen"}}
    assert revealed(event, schema, moved, ["pii", "confidential"]) == event  # a mismatch: masked
    other = {**invocation, "id": "inv_2"}
    assert revealed(event, schema, other, ["pii"]) == event
    assert revealed(event, schema, invocation, []) == event
