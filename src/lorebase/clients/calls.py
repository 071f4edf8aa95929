"""One generic call per RPC: the gRPC message of an endpoint's request, and its answer.

An endpoint (lorebase.contract) names its service and RPC; the RPC's request message is found in
the generated descriptors. Each request parameter goes to the message field of the same name, and
the JSON body either travels whole as `body` (bytes, already checked at the edge) or, for a
message without `body`, member by member into the fields of the same names. Every reply is read
the same way: its body, and where the message has them, the Revision, content type, status and
headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from google.protobuf import descriptor_pool
from google.protobuf.message import Message

from lorebase.contract import Endpoint
from lorebase.v1 import feed_pb2, keeper_pb2, memory_pb2

# The gRPC service behind each endpoint service, and the generated module of its messages.
SERVICES: dict[str, tuple[str, Any]] = {
    "keeper": ("lorebase.v1.Keeper", keeper_pb2),
    "feed": ("lorebase.v1.Feed", feed_pb2),
    "memory_store": ("lorebase.v1.MemoryStore", memory_pb2),
    "memory_journal": ("lorebase.v1.MemoryJournal", memory_pb2),
}
_MODULES = (keeper_pb2, feed_pb2, memory_pb2)


@dataclass(frozen=True)
class Answer:
    """A successful answer: the document and what the REST surface sends with it."""

    body: bytes
    revision: str
    content_type: str
    status: int
    headers: dict[str, str]

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass(frozen=True)
class Rpc:
    """The RPC of an endpoint: its stub method and request message."""

    method: str
    message: type[Message]
    fields: frozenset[str]
    body_field: bool


def _message_class(name: str) -> type[Message]:
    for module in _MODULES:
        found = getattr(module, name, None)
        if found is not None:
            return found  # type: ignore[no-any-return]
    raise LookupError(f"no generated message {name}")


def _method(endpoint: Endpoint) -> Any:
    service, _ = SERVICES[endpoint.service]
    method = descriptor_pool.Default().FindServiceByName(service).FindMethodByName(endpoint.rpc)
    if method is None:
        raise LookupError(f"{endpoint.name}: {service} has no RPC {endpoint.rpc}")
    return method


def request_message(endpoint: Endpoint) -> type[Message]:
    """The request message of the RPC an endpoint calls (the event stream's carries fewer fields
    than its request: the gateway's fan-out sends what the feed needs)."""
    return _message_class(_method(endpoint).input_type.name)


@cache
def rpc_of(endpoint: Endpoint) -> Rpc:
    """The RPC an endpoint calls, checked against its request: every parameter has a field."""
    method = _method(endpoint)
    fields = frozenset(f.name for f in method.input_type.fields)
    missing = [p.name for p in endpoint.parameters if p.name not in fields]
    if missing:
        raise LookupError(f"{endpoint.name}: {method.input_type.name} has no field for {missing}")
    return Rpc(endpoint.rpc, _message_class(method.input_type.name), fields, "body" in fields)


def message_of(endpoint: Endpoint, values: dict[str, Any], body: bytes | None) -> Message:
    """The request message of a call: `values` are the parameters, `body` the JSON body."""
    rpc = rpc_of(endpoint)
    fields = {name: value for name, value in values.items() if value is not None}
    if body is not None:
        if rpc.body_field:
            fields["body"] = body
        else:
            fields.update(
                (name, value)
                for name, value in orjson.loads(body).items()
                if name in rpc.fields and value is not None
            )
    return rpc.message(**fields)


def answer_of(endpoint: Endpoint, reply: Any) -> Answer:
    """The answer of a reply, whatever its message (Reply, ChangesReply, WebhookReply)."""
    present = reply.DESCRIPTOR.fields_by_name
    return Answer(
        reply.body,
        reply.revision if "revision" in present else "",
        (reply.content_type if "content_type" in present else "") or "application/json",
        (reply.status if "status" in present else 0) or endpoint.success,
        dict(reply.headers) if "headers" in present else {},
    )


__all__ = ["SERVICES", "Answer", "Rpc", "answer_of", "message_of", "request_message", "rpc_of"]
