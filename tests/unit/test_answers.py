"""The response models in the contract: every JSON endpoint has one, the OpenAPI document publishes
them (strict objects, no placeholder), and every example fits its model.

Real answers are held to the models in tests/integration/test_answers.py and, fuzzed, in
tests/e2e/test_contract.py.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest

from lorebase.contract import ENDPOINTS, examples
from lorebase.contract.answers.feed import OperationEvent, RevisionEvent
from lorebase.contract.answers.records import RecordView
from lorebase.contract.decode import decode_body
from lorebase.contract.openapi import _schema, document


def _json_successes() -> list[tuple[str, str, dict[str, Any]]]:
    """(operationId, status, the application/json entry) of every 2xx answer in the document."""
    found = []
    for operations in document()["paths"].values():
        for operation in operations.values():
            for status, answer in operation["responses"].items():
                if status.startswith("2") and "application/json" in answer.get("content", {}):
                    found.append((operation["operationId"], status, answer["content"]["application/json"]))
    return found


def test_every_json_endpoint_declares_its_response_model() -> None:
    missing = [e.name for e in ENDPOINTS if "application/json" in e.media_types and e.response is None]
    assert missing == []


def test_the_document_names_a_schema_for_every_success() -> None:
    """(test_openapi.py validates the document itself against OpenAPI 3.1.)"""
    successes = _json_successes()
    # every endpoint but the event stream and the 204s (no body), and the 202
    assert len(successes) >= len(ENDPOINTS) - sum(
        1 for e in ENDPOINTS if "application/json" not in e.media_types
    )
    placeholders = [
        (name, status) for name, status, entry in successes if entry["schema"] == {"type": "object"}
    ]
    assert placeholders == []


def test_answers_are_closed_objects() -> None:
    """An answer member the contract does not declare is drift: every response Struct refuses it."""
    schemas = document()["components"]["schemas"]
    open_objects = [
        name
        for name, schema in schemas.items()
        if schema.get("type") == "object" and "additionalProperties" not in schema
    ]
    # Problem details carry extra members by design; request bodies are checked by decode.
    assert "Problem" in open_objects and "RecordView" not in open_objects
    with pytest.raises(msgspec.ValidationError, match="unknown field `extra`"):
        msgspec.convert({**examples.REVISION_EVENT, "extra": 1}, RevisionEvent)


def test_sometimes_members_are_optional_and_never_null() -> None:
    """A member an answer holds only sometimes is absent, not null, when it does not apply."""
    schema = document()["components"]["schemas"]["RecordView"]
    assert "redacted" not in schema["required"] and schema["properties"]["redacted"]["type"] == "array"
    assert "revision" in schema["required"]  # always there, null on a branch without a Revision
    assert {"type": "null"} in schema["properties"]["revision"]["anyOf"]


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.example is not None], ids=lambda e: e.name)
def test_examples_fit_their_models(endpoint: Any) -> None:
    msgspec.convert(endpoint.example, endpoint.response)


def test_webhook_examples_fit_their_models() -> None:
    hooks = document()["webhooks"]
    assert set(hooks) == {"revision.committed", "operation.{side_effect}"}
    msgspec.convert(examples.REVISION_EVENT, RevisionEvent)
    msgspec.convert(examples.OPERATION_EVENT, OperationEvent)
    body = hooks["operation.{side_effect}"]["post"]["requestBody"]["content"]["application/json"]
    assert body["example"] == examples.OPERATION_EVENT


def test_a_record_view_takes_a_real_answer_and_refuses_a_wrong_type() -> None:
    answer = {
        "domain": "supply",
        "branch": "main",
        "revision": examples.HEAD,
        "ref": "Supplier/S-1001",
        "kind": "Supplier",
        "key": "S-1001",
        "title": "Kavsen Alloys Sp. z o.o.",
        "values": {"risk_score": "90", "tier": "1"},
        "updated_revision": examples.HEAD,
    }
    msgspec.convert(answer, RecordView)
    with pytest.raises(msgspec.ValidationError, match="updated_revision"):
        msgspec.convert({**answer, "updated_revision": "f4d2"}, RecordView)


def test_two_structs_of_one_name_are_refused() -> None:
    class Twin(msgspec.Struct):
        a: int

    first = Twin

    class Twin(msgspec.Struct):  # type: ignore[no-redef]
        b: str

    schemas: dict[str, Any] = {}
    _schema(first, schemas)
    with pytest.raises(TypeError, match="Twin"):
        _schema(Twin, schemas)


def test_the_revision_header_is_documented_with_its_form() -> None:
    paths = document()["paths"]
    record = paths["/api/v1/domains/{domain}/kinds/{kind}/records/{key}"]["get"]["responses"]["200"]
    changes = paths["/api/v1/domains/{domain}/branches/{branch}/changes"]["get"]["responses"]["200"]
    for answer in (record, changes):
        assert answer["headers"]["Lorebase-Revision"]["schema"]["pattern"] == "^[0-9a-f]{64}$"


@pytest.mark.parametrize(
    "endpoint", [e for e in ENDPOINTS if e.request_example is not None], ids=lambda e: e.name
)
def test_request_examples_are_requests_the_edge_takes(endpoint: Any) -> None:
    decode_body(endpoint, orjson.dumps(endpoint.request_example))
    body = document()["paths"][endpoint.openapi_path][endpoint.method.lower()]["requestBody"]
    assert body["content"]["application/json"]["example"] == endpoint.request_example


def test_replays_and_memory_answers_document_their_headers() -> None:
    paths = document()["paths"]
    execute = paths["/api/v1/domains/{domain}/operations/{operation}/execute"]["post"]["responses"]
    assert {"Lorebase-Revision", "Idempotent-Replayed"} <= set(execute["200"]["headers"])
    assert set(execute["202"]["headers"]) == set(execute["200"]["headers"])
    memory = paths["/api/v1/memory/records"]["post"]["responses"]["201"]["headers"]
    assert memory["Cache-Control"]["schema"]["enum"] == ["no-store"] and "Lorebase-Revision" not in memory
