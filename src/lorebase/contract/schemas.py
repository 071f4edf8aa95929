"""JSON Schemas as client generators read them: the shapes msgspec writes, said the way
openapi-python-client, openapi-typescript and the other common generators understand.

msgspec writes valid JSON Schema that generators still misread or drop:

- `Literal[True]` becomes `{"enum": [true]}`: openapi-python-client drops the schema (and every
  schema that refers to it); here it is `{"type": "boolean", "const": true}`;
- `list[Any]` becomes `{"type": "array"}` without `items`: dropped too; here `items: {}`;
- a `Literal` of strings becomes an `enum` without `type`: typed `unknown` by some; here
  `type: string` is said;
- `dict[str, Any]` becomes `{"type": "object"}`: openapi-typescript types it as an object with no
  members (`Record<string, never>`), so `tsc --strict` refuses an ordinary body such as an
  Operation's `parameters`; here it says `additionalProperties: true` (any member, any value).

`for_generators` rewrites a schema (or a whole document) in place of those shapes and changes
nothing else: what validates is exactly what validated before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# What a body's Struct cannot say in its annotations but the server checks, as JSON Schema merged
# into its component (lorebase.contract.openapi): "exactly one of", "at least one of", a member
# required here that the service also takes from a header. By Struct name (`members` below).
RULES: dict[str, dict[str, Any]] = {}


def _absent(names: tuple[str, ...], nullable: tuple[str, ...]) -> dict[str, Any]:
    """None of `names` given (left out, or null where null reads as left out)."""
    nulls = {name: {"type": "null"} for name in names if name not in nullable}
    schema: dict[str, Any] = {"properties": nulls} if nulls else {}
    kept = [name for name in names if name in nullable]
    if kept:  # a nullable member counts as given whenever present
        schema["not"] = {"anyOf": [{"required": [name]} for name in kept]}
    return schema


def _both(first: str, second: str, nullable: tuple[str, ...]) -> dict[str, Any]:
    """Both members given."""
    given = {name: {"not": {"type": "null"}} for name in (first, second) if name not in nullable}
    return {"required": [first, second], **({"properties": given} if given else {})}


def members(
    *,
    one_of: tuple[str, ...] = (),
    any_of: tuple[str, ...] = (),
    nullable: tuple[str, ...] = (),
    required: tuple[str, ...] = (),
    together: tuple[str, ...] = (),
) -> Callable[[T], T]:
    """A class decorator: the body's members of which exactly one (`one_of`) or at least one
    (`any_of`) must be given, members given all or none (`together`), and members the document
    requires beyond the annotations'."""

    def rule(cls: T) -> T:
        # One `not` over what is refused: a top-level oneOf/anyOf would make generators type the
        # body as a union of partial models (openapi-python-client's ContextBodyType0...).
        refused: list[dict[str, Any]] = []
        for group in (one_of, any_of):
            if group:
                refused.append(_absent(group, nullable))
        refused += [_both(a, b, nullable) for i, a in enumerate(one_of) for b in one_of[i + 1 :]]
        refused += [  # one of `together` given without another
            {"required": [given], "properties": {given: {"not": {"type": "null"}}, name: {"type": "null"}}}
            for name in together
            for given in together
            if given != name
        ]
        # a required member sent as null reads as left out: refused too
        refused += [{"required": [name], "properties": {name: {"type": "null"}}} for name in required]
        extra: dict[str, Any] = {}
        if refused:
            extra["not"] = refused[0] if len(refused) == 1 else {"anyOf": refused}
        if required:
            extra["required"] = list(required)
        RULES[cls.__name__] = extra  # type: ignore[attr-defined]
        return cls

    return rule


def _one(schema: dict[str, Any]) -> dict[str, Any]:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(value, bool) for value in enum):
        rest = {key: value for key, value in schema.items() if key != "enum"}
        if len(set(enum)) == 1:
            return {**rest, "type": "boolean", "const": enum[0]}
        return {**rest, "type": "boolean"}
    if isinstance(enum, list) and enum and "type" not in schema and all(isinstance(v, str) for v in enum):
        return {**schema, "type": "string"}
    if schema.get("type") == "array" and "items" not in schema and "prefixItems" not in schema:
        return {**schema, "items": {}}
    if (
        schema.get("type") == "object"
        and "properties" not in schema
        and "additionalProperties" not in schema
        and "patternProperties" not in schema
    ):
        return {**schema, "additionalProperties": True}
    return schema


def for_generators(node: Any) -> Any:
    """`node` (a schema, a document, or any JSON value holding schemas) with the shapes of the
    module docstring rewritten; a new value, `node` is not changed."""
    if isinstance(node, list):
        return [for_generators(item) for item in node]
    if not isinstance(node, dict):
        return node
    walked: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA:  # examples, constants and defaults are data, not schemas
            walked[key] = value
        elif key in _BY_NAME and isinstance(value, dict):  # name -> schema (a member may be named "enum")
            walked[key] = {name: for_generators(item) for name, item in value.items()}
        else:
            walked[key] = for_generators(value)
    return _one(walked) if "type" in walked or "enum" in walked else walked


_DATA = frozenset({"example", "examples", "const", "enum", "default"})
_BY_NAME = frozenset({"properties", "patternProperties", "$defs", "schemas", "paths", "webhooks"})


__all__ = ["RULES", "for_generators", "members"]
