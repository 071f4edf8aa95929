"""A request parsed once, at the edge, into its endpoint's types (lorebase.contract).

Path, query and header parameters are converted to their declared types (a query value is text:
`limit=10` becomes 10, `links=true` True), with their bounds; the body is read within its size
limit, must be a JSON object, and is decoded into its model, which refuses unknown members, wrong
types, strings with NUL or past their length, and numbers out of range. A body whose model holds
free-form documents (a query filter, parameter values, a schema document) may nest at most
MAX_DEPTH levels. What does not fit answers a problem that names the parameter or the member path:
400 for parameters and malformed JSON, the endpoint's `invalid_status` (422; 400 for memory) for a
body that does not fit. The body then travels to the service as the bytes the client sent, so
what the service reads is exactly what was checked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args, get_origin

import msgspec
from starlette.requests import ClientDisconnect, Request

from lorebase.contract import Endpoint
from lorebase.problems import Problem

# How deep a free-form document in a body may nest (a filter of filters, a value of values).
MAX_DEPTH = 64
_AT = re.compile(r" - at `\$([^`]*)`$")
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")
_JSON_TYPES = ("application/json", "application/problem+json", "")


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


def parameters(endpoint: Endpoint, request: Request) -> dict[str, Any]:
    """The endpoint's path, query and header parameters, typed; 400 naming the one that is wrong."""
    plan = _plan(endpoint)
    if endpoint.strict_query:
        unknown = sorted(set(request.query_params) - plan.query)
        if unknown:
            raise Problem(
                400,
                "invalid-parameter",
                f"{unknown[0]} is not a parameter of {endpoint.method} {endpoint.openapi_path}",
                parameter=unknown[0],
            )
    raw: dict[str, Any] = {}
    for parameter in endpoint.parameters:
        if parameter.where == "path":
            raw[parameter.name] = request.path_params[parameter.alias]
        else:
            source = request.query_params if parameter.where == "query" else request.headers
            value = source.get(parameter.alias)
            if value:  # absent or empty: the default
                raw[parameter.name] = value
    try:
        converted = msgspec.convert(raw, plan.params, strict=False)
    except msgspec.ValidationError as exc:
        path, message = _where(str(exc))
        name = plan.aliases.get(path.split(".")[0].split("[")[0], path)
        raise Problem(
            400, "invalid-parameter", f"{name}: {message}; see /openapi.json for its type", parameter=name
        ) from None
    return msgspec.structs.asdict(converted)


async def read_body(request: Request, *, limit: int, setting: str) -> bytes:
    """The body's bytes, within `limit` (413 beyond); 415 for a body that is not JSON."""
    too_large = Problem(413, "too-large", f"the body is over {limit} bytes ({setting}); send less")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
    except ClientDisconnect:
        # The client went away, or the body missed http.body_timeout_s and the protocol has
        # answered 408 and closed the connection: this answer goes nowhere.
        raise Problem(408, "request-timeout", "the request body did not arrive; send all of it") from None
    data = b"".join(chunks)
    content_type = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if data and content_type not in _JSON_TYPES and not content_type.endswith("+json"):
        raise Problem(415, "unsupported-media-type", f"send the body as application/json, not {content_type}")
    return data


def _too_deep(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, msgspec.Struct):
            stack.extend((getattr(item, f), depth + 1) for f in item.__struct_fields__)
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
            choices = _choices(info.type)
            if choices and issue["path"] == name:
                issue["message"] += f"; one of {', '.join(map(str, choices))}"
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


def check_body(endpoint: Endpoint, data: bytes) -> bytes:
    """The body, checked against its model (see the module docstring)."""
    plan = _plan(endpoint)
    assert plan.decoder is not None
    if not data.strip():
        if endpoint.body_optional:
            return b"{}"
        raise Problem(400, "malformed-json", "the request needs a JSON object body")
    if data.lstrip()[:1] != b"{":
        raise Problem(400, "malformed-json", "the body must be a JSON object")
    try:
        decoded = plan.decoder.decode(data)
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
    if plan.free_form and _too_deep(decoded, MAX_DEPTH):
        raise Problem(400, "malformed-json", f"the body nests deeper than {MAX_DEPTH} levels")
    return data


# A credential is printable ASCII: anything else could never match a key, and gRPC metadata refuses it.
_CREDENTIAL = re.compile(r"[\x20-\x7e]{1,8192}")


def credential(request: Request) -> str:
    """The caller's `Authorization` header; 401 without one, or with one no key could ever match."""
    value = request.headers.get("authorization")
    if not value:
        raise Problem(401, "unauthenticated", "send a credential as 'Authorization: Bearer <key>'")
    if _CREDENTIAL.fullmatch(value) is None:
        raise Problem(
            401, "unauthenticated", "the Authorization header must be 'Bearer <key>' in printable ASCII"
        )
    return value


__all__ = ["MAX_DEPTH", "check_body", "credential", "parameters", "read_body"]
