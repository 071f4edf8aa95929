"""A call as its handler sees it (`Call`, `DomainCall`), the handlers bound to the endpoints by name
(`handler`), the typed request made from a gRPC message (`request_of`) and the answer made from what
a handler returns (a Reply, a document, or its endpoint's answer model)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec
import orjson

from lorebase.contract import Endpoint
from lorebase.contract.decode import convert_parameters, decode_body
from lorebase.contract.endpoint import Request
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.access import Access, Principal
from lorebase_keeper.api.targets import Found
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime

R = TypeVar("R", bound=Request)


@dataclass(frozen=True)
class Call(Generic[R]):
    """One call as its handler sees it: the typed request, and the caller (None only when the
    policy lets anyone call)."""

    rt: Runtime
    endpoint: Endpoint
    request: R
    principal: Principal | None
    metadata: Mapping[str, str]

    @property
    def caller(self) -> Principal:
        assert self.principal is not None, f"{self.endpoint.name} lets anyone call: there is no caller"
        return self.principal

    @property
    def authorization(self) -> str | None:
        return self.metadata.get("authorization")


@dataclass(frozen=True)
class DomainCall(Call[R]):
    """A call in a Domain, past its policy: the Domain, the caller's Access there, the request's
    branch (its `branch`, else the Domain's default branch) and the target the policy looked up."""

    domain: Domain
    access: Access
    branch: str
    target: Found


Answer = pb.Reply | dict[str, Any] | msgspec.Struct
Handler = Callable[[Any], Awaitable[Answer]]
HANDLERS: dict[str, Handler] = {}


def handler(name: str) -> Callable[[Handler], Handler]:
    """Bind a function to the endpoint `name` (lorebase.contract): it is called with a `Call`
    (a `DomainCall` when a grant in a Domain is needed) once the endpoint's policy holds."""

    def bind(function: Handler) -> Handler:
        if name in HANDLERS:
            raise TypeError(f"two handlers for {name}")
        HANDLERS[name] = function
        return function

    return bind


def reply(
    document: Any, *, status: int = 200, revision: str | None = None, headers: dict[str, str] | None = None
) -> pb.Reply:
    """A JSON answer; its Revision is the document's `revision` unless given."""
    if revision is None and isinstance(document, dict):
        revision = document.get("revision")
    return pb.Reply(
        body=orjson.dumps(document),
        revision=revision or "",
        content_type="application/json",
        status=status,
        headers=headers or {},
    )


def answer_of(endpoint: Endpoint, answer: Answer) -> pb.Reply:
    if isinstance(answer, pb.Reply):
        return answer
    if isinstance(answer, msgspec.Struct):
        revision = getattr(answer, "revision", None)
        return pb.Reply(
            body=msgspec.json.encode(answer),
            revision=revision if isinstance(revision, str) else "",
            content_type="application/json",
            status=endpoint.success,
        )
    return reply(answer, status=endpoint.success)


def request_of(endpoint: Endpoint, message: Any) -> Request:
    """The endpoint's typed request from its gRPC message: each parameter from the field of its name
    (an empty field: not sent), the body from `body` or, for a message without one, from the fields
    named like its members."""
    present = message.DESCRIPTOR.fields_by_name
    raw = {}
    for parameter in endpoint.parameters:
        value = getattr(message, parameter.name) if parameter.name in present else None
        if value or parameter.required:
            raw[parameter.name] = value
    fields = convert_parameters(endpoint, raw)
    if endpoint.body is not None:
        if "body" in present:
            data = message.body
        else:
            names = [f.encode_name for f in msgspec.structs.fields(endpoint.body)]
            data = orjson.dumps({n: getattr(message, n) for n in names if getattr(message, n, None)})
        fields["body"] = decode_body(endpoint, data)
    return endpoint.request(**fields)


def field_of(request: Any, path: str) -> Any:
    """A request field by its path (`branch`, `body.source`), None when absent."""
    value = request
    for part in path.split("."):
        value = getattr(value, part, None)
    return value


def request_branch(request: Any) -> str:
    """The request's branch: its `branch` parameter or body member ("" when it names none)."""
    branch = field_of(request, "branch")
    if branch is None:
        branch = field_of(request, "body.branch")
    return branch if isinstance(branch, str) else ""


def check_answer(endpoint: Endpoint, answer: pb.Reply) -> None:
    """The answer converted into the model its declaration names for its status, strictly (the
    setting keeper.check_answers): one that does not fit is a 500 naming what differs."""
    models = {endpoint.success: endpoint.response, **dict(endpoint.other_answers)}
    model = models.get(answer.status)
    if model is None or not answer.content_type.startswith("application/json") or not answer.body:
        return
    try:
        msgspec.convert(orjson.loads(answer.body), model, strict=True)
    except msgspec.ValidationError as exc:
        raise AssertionError(f"{endpoint.name} answered {answer.status} outside its model: {exc}") from exc


__all__ = [
    "HANDLERS",
    "Answer",
    "Call",
    "DomainCall",
    "answer_of",
    "check_answer",
    "field_of",
    "handler",
    "reply",
    "request_branch",
    "request_of",
]
