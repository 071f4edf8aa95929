"""A request parsed once, at the edge, into its endpoint's types (lorebase.contract.decode).

Path, query and header parameters are converted to their declared types (a query value is text:
`limit=10` becomes 10, `links=true` True), with their bounds; the body is read within its size
limit and decoded into its model (lorebase.contract.decode says the rules). The body then travels
to the service as the bytes the client sent, so what the service reads is exactly what was checked
here, and the service decodes it with the same model. A bulk endpoint's body past the body gate's
PREAUTH_BYTES (an import) is not decoded here but only by its service, whose problems are the same
(lorebase_gateway.routes): decoding 100,000 Records twice, one process after the other, cost an
import 0.4 s.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, get_args, get_origin

from starlette.requests import ClientDisconnect, Request

from lorebase.contract import Endpoint
from lorebase.contract.decode import convert_parameters, decode_body, unknown_query
from lorebase.credentials import unknown_credential
from lorebase.event_loop import collection_paused
from lorebase.problems import Problem

_JSON_TYPES = ("application/json", "application/problem+json", "")


def parameters(endpoint: Endpoint, request: Request) -> dict[str, Any]:
    """The endpoint's path, query and header parameters, typed; 400 naming the one that is wrong."""
    if endpoint.strict_query:
        unknown_query(endpoint, request.query_params)
    raw: dict[str, Any] = {}
    for parameter in endpoint.parameters:
        if parameter.where == "path":
            raw[parameter.name] = request.path_params[parameter.alias]
        else:
            source = request.query_params if parameter.where == "query" else request.headers
            value = source.get(parameter.alias)
            if value or (value == "" and not _text(parameter.type)):
                # absent, or an empty text: the default; an empty number or flag is refused (400)
                raw[parameter.name] = value
    return convert_parameters(endpoint, raw)


@cache
def _text(annotation: Any) -> bool:
    """Whether a parameter's type is text (an empty value then means "left out")."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation is str or str in get_args(annotation)


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


def check_body(endpoint: Endpoint, data: bytes) -> bytes:
    """The body, checked against its model; an empty optional body is `{}`."""
    if endpoint.body_optional and not data.strip():
        data = b"{}"
    # The decoded body (a 100,000-Record import: a million objects) dies inside the block, so the
    # collector neither walks it meanwhile nor finds it after (lorebase.event_loop).
    with collection_paused():
        decode_body(endpoint, data)
    return data


# A credential is printable ASCII: anything else could never match a key, and gRPC metadata refuses it.
_CREDENTIAL = re.compile(r"[\x20-\x7e]{1,8192}")


def credential(request: Request) -> str:
    """The caller's `Authorization` header; 401 without one, or with one no key could ever match."""
    value = request.headers.get("authorization")
    if not value:
        raise unknown_credential("send a credential as 'Authorization: Bearer <key>'")
    if _CREDENTIAL.fullmatch(value) is None:
        raise unknown_credential("the Authorization header must be 'Bearer <key>' in printable ASCII")
    return value


__all__ = ["check_body", "credential", "parameters", "read_body"]
