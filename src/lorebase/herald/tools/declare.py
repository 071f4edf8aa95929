"""How a Herald tool is declared: `tool()` registers it in TOOLS, in the order the tool modules
declare them, with a JSON schema for its input.

A tool's arguments are made from the declarations of the endpoints it calls (`calls`), the ones
/openapi.json is made from: each argument is the declared parameter or body member of the same name
(`aliases` for another name), with its type, enum, range, length and pattern (`for_tool` says how a
declared schema becomes an argument), so a tool cannot describe what the server refuses. A tool says
only what a model reads (`Arg`: a description, and Herald's own default where it has one). An
argument the endpoints do not declare, or one whose shape Herald changes, is Herald's own and says
why (`own`); a tool that names a member no endpoint declares and does not say so fails at import.
tests/unit/test_herald_tools.py checks every argument against the declarations.

Here too: the arguments most tools share (DOMAIN, BRANCH, AT, KIND, KEY, FORMAT, RECORD) and how a
tool answers (`json_answer`, `members`, `wants_markdown`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from lorebase.clients.rest import RestClient
from lorebase.contract import BY_NAME
from lorebase.contract.schemas import for_generators


@dataclass(frozen=True)
class Answer:
    """What a tool answers: text for the model, and the JSON answer when there is one."""

    text: str
    data: Any = None


@dataclass(frozen=True)
class HeraldTool:
    name: str
    description: str
    properties: dict[str, Any]  # each argument's JSON Schema (made by `tool` from the declarations)
    run: Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]
    calls: tuple[str, ...]  # the endpoints it calls (lorebase.contract), whose members its arguments are
    own: dict[str, str]  # its arguments that are Herald's own, each with why
    aliases: dict[str, str]  # an argument named otherwise than its declared member: argument -> member
    required: tuple[str, ...] = ()
    read_only: bool = True
    # MCP tool annotations: a write tool may update and delete (destructive), and one answered once
    # per idempotency key is idempotent (lorebase_execute derives a key when none is given).
    destructive: bool = False
    idempotent: bool = True

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema


@dataclass(frozen=True)
class Arg:
    """An argument made from the declared member of the same name: what a model reads about it, and
    Herald's own default where it has one (`dry_run` true: Herald writes only when asked)."""

    description: str
    default: Any = None


_NO_NUL = "^[^\\x00]*$"  # every declared string's; it says nothing to a model


def for_tool(schema: Any) -> Any:
    """A declared JSON Schema as a tool argument: a null alternative dropped (a model leaves the
    argument out instead), a nested document named by its type (the description says what goes
    in it; /openapi.json has the whole), descriptions inside it and the pattern that only refuses
    NUL left out. The rest stays as declared: type, enum, range, length, pattern, items."""
    if isinstance(schema, list):
        return [for_tool(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {"type": "object"}
    if "anyOf" in schema:
        kept = [alternative for alternative in schema["anyOf"] if alternative != {"type": "null"}]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        if len(kept) == 1:
            return for_tool({**kept[0], **rest})
        schema = {**rest, "anyOf": kept}
    return {
        key: for_tool(value)
        for key, value in schema.items()
        if key not in ("description", "$defs", "title") and not (key == "pattern" and value == _NO_NUL)
    }


def declared_member(endpoint: str, name: str) -> Any:
    """The declared type of a parameter (by its name in the request) or body member; None when the
    endpoint declares none of that name."""
    declared = BY_NAME[endpoint]
    hint: Any = next((p.type for p in declared.parameters if p.alias == name), None)
    if hint is None and isinstance(declared.body, type) and issubclass(declared.body, msgspec.Struct):
        hint = next((f.type for f in msgspec.structs.fields(declared.body) if f.encode_name == name), None)
    return hint


def declared_argument(calls: tuple[str, ...], name: str) -> dict[str, Any] | None:
    """The argument `name` as the first of `calls` that declares it says (None: none does)."""
    for endpoint in calls:
        hint = declared_member(endpoint, name)
        if hint is not None:
            schema = for_generators(msgspec.json.schema(hint))
            return dict(for_tool(schema))
    return None


DOMAIN = Arg("the Domain (default: the one Herald was started for)")
BRANCH = Arg("the branch (default: the Domain's default branch)")
AT = Arg("read as of this Revision (64 hex digits or a unique prefix of 12+)")
KIND = Arg("a Kind of the schema, as in Supplier")
KEY = Arg("the Record's key, as in S-1001")
FORMAT = {
    "type": "string",
    "enum": ["markdown", "json"],
    "default": "markdown",
    "description": "answer format",
}
# Why FORMAT is Herald's own: it answers Markdown unless asked, and names JSON `json` where REST's
# default is the empty format.
FORMAT_WHY = "Herald answers Markdown unless asked for json; REST's default is JSON"

# The arguments naming one Record, as of a branch or Revision.
RECORD = {"kind": KIND, "key": KEY, "branch": BRANCH, "at": AT}


def json_answer(data: Any) -> Answer:
    return Answer(json.dumps(data, ensure_ascii=False, separators=(",", ":")), data)


def members(arguments: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: arguments[name] for name in names if arguments.get(name) not in (None, "", [])}


def wants_markdown(arguments: dict[str, Any]) -> bool:
    return arguments.get("format", "markdown") == "markdown"


TOOLS: list[HeraldTool] = []


def tool(
    name: str,
    description: str,
    arguments: Mapping[str, Arg | dict[str, Any]],
    *,
    calls: tuple[str, ...],
    own: dict[str, str] | None = None,
    aliases: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
    read_only: bool = True,
    destructive: bool = False,
    idempotent: bool = True,
) -> Callable[[Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]], None]:
    """Register a tool calling `calls`; each `Arg` becomes the declared member of its name (or
    alias), each schema written out must be in `own`, with why."""
    own = own or {}
    aliases = aliases or {}
    properties: dict[str, Any] = {}
    for argument, given in {"domain": DOMAIN, **arguments}.items():
        if isinstance(given, dict):
            if argument not in own:
                raise TypeError(f"{name}.{argument}: written out; make it an Arg or say why in own")
            properties[argument] = given
            continue
        schema = declared_argument(calls, aliases.get(argument, argument))
        if schema is None:
            raise TypeError(f"{name}.{argument}: no endpoint of {calls} declares it")
        schema["description"] = given.description
        if given.default is not None:
            schema["default"] = given.default
        properties[argument] = schema

    def register(run: Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]) -> None:
        TOOLS.append(
            HeraldTool(
                name,
                description,
                properties,
                run,
                calls,
                own,
                aliases,
                required,
                read_only,
                destructive,
                idempotent,
            )
        )

    return register


__all__ = [
    "AT",
    "BRANCH",
    "DOMAIN",
    "FORMAT",
    "FORMAT_WHY",
    "KEY",
    "KIND",
    "RECORD",
    "TOOLS",
    "Answer",
    "Arg",
    "HeraldTool",
    "declared_argument",
    "declared_member",
    "for_tool",
    "json_answer",
    "members",
    "tool",
    "wants_markdown",
]
