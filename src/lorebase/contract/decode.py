"""Decoding a request into its endpoint's types: parameters and JSON body, with every bound the
declarations state (lorebase.contract). The gateway decodes at the edge (lorebase_gateway.edge);
a service decodes the same bytes with the same models (a gRPC caller skips the gateway), so a body
has one definition and one set of rules, and a problem reads the same wherever it is found.

A body must be a JSON object that fits its model: unknown members, wrong types, strings with NUL
or past their length and numbers out of range answer the endpoint's `invalid_status` (422; 400 for
memory) with one issue per member; free-form documents (a query filter, parameter values, a schema
document, a memory record's content) may nest at most MAX_DEPTH levels (400) and hold no NUL in a
string or a member name (the endpoint's `invalid_status`). Parameters that do not convert answer 400
naming the parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar, get_args, get_origin

import msgspec

from lorebase.contract import BY_NAME
from lorebase.contract.endpoint import Endpoint
from lorebase.problems import Problem

B = TypeVar("B")

# How deep a free-form document in a body may nest (a filter of filters, a value of values).
MAX_DEPTH = 64
_AT = re.compile(r" - at `\$([^`]*)`\Z")
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")
_MISSING = re.compile(r"Object missing required field `([^`]*)`")
# The problem of a parameter that does not fit its type, where it has its own (else invalid-parameter).
_PARAMETER_CODES = {"at": "invalid-at", "branch": "invalid-branch", "session": "invalid-session"}


@dataclass(frozen=True)
class _Plan:
    params: type[msgspec.Struct]
    aliases: dict[str, str]  # field -> its name in the path, query or header
    query: frozenset[str]  # the query parameters it declares
    decoder: msgspec.json.Decoder[Any] | None
    free_form: bool  # the body model holds documents of any depth


def _free_form(kind: Any, seen: frozenset[Any] = frozenset()) -> bool:
    """Whether a type admits values of any depth (Any, or a dict/list of them)."""
    if kind is Any:
        return True
    if kind in seen:
        return False
    origin = get_origin(kind)
    if origin is not None:
        return any(_free_form(arg, seen | {kind}) for arg in get_args(kind) if arg is not Ellipsis)
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        hints = msgspec.structs.fields(kind)
        return any(_free_form(f.type, seen | {kind}) for f in hints)
    return False


@cache
def _plan(endpoint: Endpoint) -> _Plan:
    defaults = {f.name: f for f in msgspec.structs.fields(endpoint.request)}
    fields: list[tuple[Any, ...]] = []
    for parameter in endpoint.parameters:
        info = defaults[parameter.name]
        if info.required:
            fields.append((parameter.name, parameter.type))
        else:
            fields.append((parameter.name, parameter.type, info.default))
    params = msgspec.defstruct(f"{endpoint.name}_parameters", fields, kw_only=True)
    decoder = msgspec.json.Decoder(endpoint.body) if endpoint.body is not None else None
    return _Plan(
        params,
        {p.name: p.alias for p in endpoint.parameters},
        frozenset(p.alias for p in endpoint.parameters if p.where == "query"),
        decoder,
        endpoint.body is not None and _free_form(endpoint.body),
    )


def _where(message: str) -> tuple[str, str]:
    """The member path a msgspec error names (`a.b[0]`), and the message without it."""
    found = _AT.search(message)
    if found is None:
        return "", message
    return found.group(1).lstrip("."), message[: found.start()]


def convert_parameters(endpoint: Endpoint, raw: dict[str, Any]) -> dict[str, Any]:
    """The endpoint's parameters from their text (`raw`: field -> value as sent), typed and bounded;
    400 invalid-parameter naming the one that is wrong."""
    plan = _plan(endpoint)
    try:
        converted = msgspec.convert(raw, plan.params, strict=False)
    except msgspec.ValidationError as exc:
        path, message = _where(str(exc))
        missing = _MISSING.search(message)
        if missing is not None:  # a required parameter left out
            path, message = missing.group(1), "is required"
        field = path.split(".")[0].split("[")[0]
        name = plan.aliases.get(field, path)
        described = next((_description(p.type) for p in endpoint.parameters if p.name == field), "")
        if "matching regex" in message and described:
            message = f"not valid here: {described}"
        raise Problem(
            400,
            _PARAMETER_CODES.get(name, "invalid-parameter"),
            f"{name}: {message}; see /openapi.json for its type",
            parameter=name,
        ) from None
    return msgspec.structs.asdict(converted)


def unknown_query(endpoint: Endpoint, names: Any) -> None:
    """400 for a query parameter a strict endpoint does not declare."""
    unknown = sorted(set(names) - _plan(endpoint).query)
    if unknown:
        raise Problem(
            400,
            "invalid-parameter",
            f"{unknown[0]} is not a parameter of {endpoint.method} {endpoint.openapi_path}",
            parameter=unknown[0],
        )


def _free_form_fault(value: Any, limit: int, data: bytes | None = None) -> tuple[str, str] | None:
    """What a decoded body's free-form documents break, if anything: ("depth", "") when they nest
    deeper than `limit`, or ("nul", path) for the first string or member name holding NUL, which
    PostgreSQL refuses in text and JSON (typed strings are checked by their patterns already).

    With the body's bytes `data`: JSON can only spell NUL as the escape `\\u0000` (a raw NUL byte
    is malformed), so a body without that escape needs only the depth check, which walks level by
    level without building paths (a 100,000-Record import: a tenth of the time of the full walk)."""
    if data is not None and b"\\u0000" not in data:
        if _brackets_within(data, limit):
            return None
        return ("depth", "") if _nests_deeper(value, limit) else None
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if depth > limit:
            return "depth", ""
        if isinstance(item, str):
            if "\x00" in item:
                return "nul", path
        elif isinstance(item, dict):
            for name, child in item.items():
                where = f"{path}.{name}" if path else str(name)
                if isinstance(name, str) and "\x00" in name:
                    return "nul", where
                stack.append((child, depth + 1, where))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, msgspec.Struct):
            for field in item.__struct_fields__:
                stack.append((getattr(item, field), depth + 1, f"{path}.{field}" if path else field))
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")


def _brackets_within(data: bytes, limit: int) -> bool:
    """Whether the brackets of JSON text `data` nest at most `limit` deep, so that no value decoded
    from it sits deeper than `limit` (a value is inside as many brackets as its depth, or is a
    container one deeper): a bound from the bytes alone, for the walk over a million decoded values
    to be skipped (0.2 s of a 100,000-Record import; the walk still decides when this says no).

    Each pass deletes the pairs with nothing between them, which shortens every chain of nested
    brackets by at most two (`[{}]` goes in one pass), so text emptied within limit // 2 passes nests
    at most `limit` deep. Brackets inside strings can only add to what is left, never take a real
    level away (a pass removes only pairs next to each other)."""
    left = data.translate(None, _NOT_BRACKETS)
    for _ in range(limit // 2):
        if not left:
            return True
        left = left.replace(b"{}", b"").replace(b"[]", b"")
    return not left


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether some value inside `value` (depth 0) sits deeper than `limit` (as _free_form_fault
    counts: a member, an item or a field is one deeper than what holds it), level by level."""
    nodes = [value]
    depth = 0
    while nodes:
        if depth > limit:
            return True
        below: list[Any] = []
        add = below.extend
        for item in nodes:
            kind = type(item)
            if kind is dict:
                add(item.values())
            elif kind is list:
                add(item)
            elif kind in _SCALARS:
                pass
            elif isinstance(item, dict):
                add(item.values())
            elif isinstance(item, list):
                add(item)
            elif isinstance(item, msgspec.Struct):
                add(msgspec.structs.astuple(item))
        depth += 1
        # Scalars end a branch; only at the level past the limit does one count (it is too deep).
        nodes = below if depth > limit else [item for item in below if type(item) not in _SCALARS]
    return False


def _issue(prefix: str, error: str) -> dict[str, str]:
    path, message = _where(error)
    unknown = _UNKNOWN.search(message)
    if unknown is not None:
        path = ".".join(p for p in (path, unknown.group(1)) if p)
        message = f"{unknown.group(1)} is not a member here; /openapi.json lists the members"
    if prefix:
        path = prefix + (path if path.startswith("[") or not path else "." + path)
    return {"path": path, "rule": "unknown_member" if unknown else "invalid", "message": message}


def _choices(kind: Any) -> tuple[Any, ...]:
    """The values a Literal (or an optional Literal) allows."""
    if get_origin(kind) is Literal:
        return get_args(kind)
    return next((found for arg in get_args(kind) if (found := _choices(arg))), ())


def _description(kind: Any) -> str:
    """The description a type's constraints carry (what a valid value looks like), if any."""
    for arg in get_args(kind):
        if isinstance(arg, msgspec.Meta) and arg.description:
            return arg.description
        found = _description(arg)
        if found:
            return found
    return ""


def _issues(model: Any, data: bytes) -> list[dict[str, str]]:
    """Every member of a body that does not fit its model (msgspec stops at the first): one issue
    per top-level member, in declaration order, then the unknown ones. Only on the error path."""
    if not (isinstance(model, type) and issubclass(model, msgspec.Struct)):
        return []
    try:
        document = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return []
    if not isinstance(document, dict):
        return []
    fields = {f.encode_name: f for f in msgspec.structs.fields(model)}
    issues = []
    for name, info in fields.items():
        if name not in document:
            if info.required:
                issues.append({"path": name, "rule": "required", "message": f"{name} is required"})
            continue
        try:
            msgspec.convert(document[name], info.type, strict=True)
        except msgspec.ValidationError as exc:
            issue = _issue(name, str(exc))
            if issue["path"] == name:
                choices = _choices(info.type)
                if choices:
                    issue["message"] += f"; one of {', '.join(map(str, choices))}"
                described = _description(info.type)
                if "matching regex" in issue["message"] and described:
                    issue["message"] = f"not valid here: {described}"
            issues.append(issue)
    for name in document:
        if name not in fields:
            issues.append(
                {
                    "path": name,
                    "rule": "unknown_member",
                    "message": f"{name} is not a member here; /openapi.json lists the members",
                }
            )
    return issues


def _integral(value: Any) -> Any:
    """`value` with every integral number an int: JSON has one number type, and JSON Schema's
    `integer` (the document's) is any number without a fraction, so `3.0` is the integer 3. Only on
    the error path of a body that gave a float where an integer goes."""
    if type(value) is float:
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if type(value) is dict:
        return {name: _integral(item) for name, item in value.items()}
    if type(value) is list:
        return [_integral(item) for item in value]
    return value


def decode_body(endpoint: Endpoint, data: bytes) -> Any:
    """The body decoded into its model (see the module docstring); an empty optional body is {}."""
    plan = _plan(endpoint)
    assert plan.decoder is not None
    if not data.strip():
        if endpoint.body_optional:
            data = b"{}"
        else:
            raise Problem(400, "malformed-json", "the request needs a JSON object body")
    if data.lstrip()[:1] != b"{":
        raise Problem(400, "malformed-json", "the body must be a JSON object")
    try:
        try:
            decoded = plan.decoder.decode(data)
        except msgspec.ValidationError as exc:
            if "got `float`" not in str(exc):
                raise
            decoded = msgspec.convert(_integral(msgspec.json.decode(data)), endpoint.body)
    except msgspec.ValidationError as exc:
        issues = _issues(endpoint.body, data) or [_issue("", str(exc))]
        first = issues[0]
        raise Problem(
            endpoint.invalid_status,
            "validation-failed",
            f"{first['path'] or 'the body'}: {first['message']}"
            + (f" (and {len(issues) - 1} more issues)" if len(issues) > 1 else ""),
            issues=issues,
        ) from None
    except msgspec.DecodeError as exc:
        raise Problem(400, "malformed-json", f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise Problem(400, "malformed-json", f"the body nests deeper than {MAX_DEPTH} levels") from None
    fault = _free_form_fault(decoded, MAX_DEPTH, data) if plan.free_form else None
    if fault is not None:
        kind, path = fault
        if kind == "depth":
            raise Problem(400, "malformed-json", f"the body nests deeper than {MAX_DEPTH} levels")
        message = "text may not contain NUL (\\u0000): remove it"
        raise Problem(
            endpoint.invalid_status,
            "validation-failed",
            f"{path}: {message}",
            issues=[{"path": path, "rule": "invalid", "message": message}],
        )
    return decoded


def body_of(endpoint: str, data: bytes, model: type[B]) -> B:
    """The JSON body of the endpoint named `endpoint`, decoded into its model `model` (the one its
    declaration names), as a service reads it: the same rules and problems as at the edge."""
    declared = BY_NAME[endpoint]
    if declared.body is not model:
        raise TypeError(f"{endpoint} takes a {declared.body}, not a {model.__name__}")
    value = decode_body(declared, data)
    assert isinstance(value, model)
    return value


__all__ = ["MAX_DEPTH", "body_of", "convert_parameters", "decode_body", "unknown_query"]
