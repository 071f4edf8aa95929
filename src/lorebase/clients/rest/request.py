"""The HTTP request of a declared endpoint (lorebase.contract), built from the keywords of a call.

The keywords of a call are the endpoint's parameters, by their field name in the request model
(`kind`, `links`, `from_revision` for `?from=`, `idempotency_key` for the `Idempotency-Key` header),
and, when the body is a Struct, its members by field name (`from_` for `from`). `body=` gives the
whole JSON body, a mapping or a Struct: it is the way to send a document body (agent memory) and a
member whose name a parameter already takes (an execution's `idempotency_key`); members given as
keywords are added to it. None or "" means "not given", as an empty query value means the default
to the gateway; a path parameter must be given and not empty.

A keyword the endpoint does not take is a `TypeError` at once, and values are checked before
anything is sent, by the code the gateway runs (lorebase.contract.decode): a bad parameter is the
same `400 invalid-parameter`, a body that does not fit its model the same `422 validation-failed`
(400 for memory) with the same `issues`. A call that passes here fails at the server only for what
the server alone knows (a name that does not exist, a permission, a conflict).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import quote

import msgspec
import orjson

from lorebase.contract import Endpoint, Parameter
from lorebase.contract.decode import convert_parameters, decode_body
from lorebase.problems import Problem

_TEMPLATE = re.compile(r"\{(\w+)(:path)?\}")


@dataclass(frozen=True)
class HttpRequest:
    """What goes on the wire: method, path (quoted), query, headers and the JSON body's bytes."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    content: bytes | None


@dataclass(frozen=True)
class _Shape:
    parameters: dict[str, Parameter]  # by field name
    defaults: dict[str, Any]  # parameter field -> its default (path parameters have none)
    members: dict[str, str]  # body member given as a keyword: field name -> JSON name
    takes_body: bool


@cache
def _shape(endpoint: Endpoint) -> _Shape:
    parameters = {p.name: p for p in endpoint.parameters}
    defaults = {
        f.name: f.default
        for f in msgspec.structs.fields(endpoint.request)
        if f.name in parameters and f.default is not msgspec.NODEFAULT
    }
    members: dict[str, str] = {}
    if isinstance(endpoint.body, type) and issubclass(endpoint.body, msgspec.Struct):
        members = {
            f.name: f.encode_name for f in msgspec.structs.fields(endpoint.body) if f.name not in parameters
        }
    return _Shape(parameters, defaults, members, endpoint.body is not None)


def keywords(endpoint: Endpoint) -> list[str]:
    """The keywords a call of `endpoint` takes, in the order of its declaration."""
    shape = _shape(endpoint)
    return [*shape.parameters, *shape.members, *(["body"] if shape.takes_body else [])]


def signature(endpoint: Endpoint) -> inspect.Signature:
    """The signature of the client method of `endpoint` (what `help()` and editors show)."""
    shape = _shape(endpoint)
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    for name, parameter in shape.parameters.items():
        default = shape.defaults.get(name, inspect.Parameter.empty)
        params.append(inspect.Parameter(name, kw, default=default, annotation=parameter.type))
    params += [inspect.Parameter(name, kw, default=None) for name in shape.members]
    if shape.takes_body:
        params.append(inspect.Parameter("body", kw, default=None, annotation=endpoint.body))
    return inspect.Signature(params)


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and value == "")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _check_keywords(endpoint: Endpoint, shape: _Shape, arguments: Mapping[str, Any]) -> None:
    for name in arguments:
        if (
            name not in shape.parameters
            and name not in shape.members
            and not (name == "body" and shape.takes_body)
        ):
            raise TypeError(
                f"{endpoint.name}() got an unexpected keyword argument {name!r}; "
                f"it takes {', '.join(keywords(endpoint)) or 'none'}"
            )
    for name, parameter in shape.parameters.items():
        if parameter.where == "path" and name not in arguments:
            raise TypeError(f"{endpoint.name}() missing the keyword argument {name!r}")


def _document(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if isinstance(body, msgspec.Struct):
        return dict(msgspec.to_builtins(body))
    if isinstance(body, Mapping):
        return dict(body)
    raise TypeError(f"body must be a mapping or a Struct, not {type(body).__name__}")


def build(endpoint: Endpoint, arguments: Mapping[str, Any]) -> HttpRequest:
    """The request of a call of `endpoint` with `arguments` (see the module docstring)."""
    shape = _shape(endpoint)
    _check_keywords(endpoint, shape, arguments)
    raw: dict[str, Any] = {}
    for name, parameter in shape.parameters.items():
        value = arguments.get(name)
        if _given(value):
            raw[name] = value
        elif parameter.where == "path":
            raise Problem(
                400, "invalid-parameter", f"{parameter.alias} must not be empty", parameter=parameter.alias
            )
    values = convert_parameters(endpoint, raw)
    by_alias = {p.alias: p.name for p in shape.parameters.values() if p.where == "path"}

    def fill(match: re.Match[str]) -> str:
        return quote(_text(values[by_alias[match.group(1)]]), safe="/" if match.group(2) else "")

    query: dict[str, str] = {}
    headers: dict[str, str] = {}
    for name, parameter in shape.parameters.items():
        if parameter.where == "path" or name not in raw or values[name] == shape.defaults.get(name):
            continue
        (query if parameter.where == "query" else headers)[parameter.alias] = _text(values[name])

    content = None
    if shape.takes_body:
        document = _document(arguments.get("body"))
        document.update(
            (json_name, arguments[name])
            for name, json_name in shape.members.items()
            if _given(arguments.get(name))
        )
        if document or arguments.get("body") is not None or not endpoint.body_optional:
            content = orjson.dumps(document)
            decode_body(endpoint, content)
            headers["Content-Type"] = "application/json"
    return HttpRequest(endpoint.method, _TEMPLATE.sub(fill, endpoint.path), query, headers, content)


__all__ = ["HttpRequest", "build", "keywords", "signature"]
