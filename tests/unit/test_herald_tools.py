"""Herald's tools describe their arguments as /openapi.json does: every argument of a tool is the
parameter or body member of that name in the document's operations of the endpoints the tool calls,
with the same type, enum, range, length and pattern (lorebase.herald.tools.for_tool), unless it is
Herald's own and says why. The test reads the served document, not the declarations, so a tool
and the document cannot disagree without it failing."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from lorebase.contract import BY_NAME
from lorebase.contract.openapi import document
from lorebase.herald.tools import TOOLS, TOOLS_BY_NAME, Arg, for_tool, tool

DOCUMENT = document()


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _in_document(endpoint: str, name: str) -> dict[str, Any] | None:
    declared = BY_NAME[endpoint]
    operation = DOCUMENT["paths"][declared.openapi_path][declared.method.lower()]
    for parameter in operation.get("parameters", ()):
        if parameter["name"] == name:
            return dict(parameter["schema"])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        properties = _resolve(body["schema"]).get("properties", {})
        if name in properties:
            return dict(properties[name])
    return None


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ("description", "default")}


@pytest.mark.parametrize("name", sorted(TOOLS_BY_NAME))
def test_every_argument_is_the_document_s_member(name: str) -> None:
    herald = TOOLS_BY_NAME[name]
    for argument, schema in herald.input_schema["properties"].items():
        assert schema.get("description"), f"{name}.{argument} says nothing to a model"
        if argument in herald.own:
            assert herald.own[argument], f"{name}.{argument}: Herald's own, but not why"
            continue
        member = herald.aliases.get(argument, argument)
        found = next(
            (s for s in (_in_document(e, member) for e in herald.calls) if s is not None),
            None,
        )
        assert found is not None, f"{name}.{argument}: no operation of {herald.calls} has {member}"
        assert _shape(schema) == _shape(for_tool(found)), f"{name}.{argument} disagrees with /openapi.json"


def test_a_tool_cannot_write_out_a_declared_member_or_name_an_undeclared_one() -> None:
    with pytest.raises(TypeError, match="make it an Arg or say why"):
        tool("lorebase_bad", "", {"limit": {"type": "integer"}}, calls=("search",))
    with pytest.raises(TypeError, match="declares it"):
        tool("lorebase_bad", "", {"nonsense": Arg("x")}, calls=("search",))
    assert "lorebase_bad" not in {t.name for t in TOOLS}


def test_what_the_server_refuses_the_tools_refuse() -> None:
    """The order_by the server takes (a name, -name, or a list of them), not objects; the reconciliation
    filter's assigned=me; a limit within the declared range."""
    query = jsonschema.Draft202012Validator(TOOLS_BY_NAME["lorebase_query"].input_schema)
    assert query.is_valid({"kind": "Supplier", "order_by": "-risk_score"})
    assert query.is_valid({"kind": "Supplier", "order_by": ["country", "-risk_score"]})
    assert not query.is_valid({"kind": "Supplier", "order_by": [{"attr": "risk_score", "dir": "desc"}]})
    reconciliation = jsonschema.Draft202012Validator(TOOLS_BY_NAME["lorebase_reconciliation"].input_schema)
    assert reconciliation.is_valid({"assigned": "me", "status": "open"})
    assert not reconciliation.is_valid({"assigned": True})
    assert not reconciliation.is_valid({"status": "pending"})
    changes = jsonschema.Draft202012Validator(TOOLS_BY_NAME["lorebase_changes"].input_schema)
    assert not changes.is_valid({"limit": 101})
