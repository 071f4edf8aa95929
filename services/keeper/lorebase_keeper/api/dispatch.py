"""Keeper's door: every RPC of the Keeper service is reached here, through its endpoint's declaration
(lorebase.contract), and nowhere else.

For each call the dispatcher, in order:

1. authenticates the credential of the `authorization` metadata (unless the policy says anyone) and
   charges the caller's rate limit in its class (the declaration's `writes`);
2. decodes the request message into the endpoint's typed request, with the rules and problems of the
   gateway's edge (lorebase.contract.decode): a gRPC caller that skips the gateway gets the same
   answers;
3. enforces the endpoint's policy (lorebase.contract.policy, `enforce`): the admin principal, or a
   grant in the Domain the request names; the stored thing it names looked up (api/targets.py) and,
   when the caller may not read it, answered exactly as if it were absent; its owner; the needs on
   their branches; the Kinds it reaches; what it hands out;
4. runs the handler bound to the endpoint (`handler`) with a `Call`: the typed request and what the
   policy found;
5. reveals vault refs in the answer as the caller may see them, and keeps the call as a step of the
   caller's agent session (the `lorebase-session` metadata) unless the declaration says `traced=False`.

A Problem anywhere becomes its gRPC status (lorebase.grpc_problems). A handler cannot be reached any
other way: the servicer's methods are made here from the declarations, and the module that assembles
them (api/keeper.py) fails at import when an endpoint has no handler or a handler no endpoint.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import grpc
import msgspec
import orjson

from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.contract.decode import convert_parameters, decode_body
from lorebase.contract.endpoint import Request
from lorebase.contract.policy import Delegation, Need, Permission, Scope, Who
from lorebase.credentials import ADMIN_PRINCIPAL
from lorebase.event_loop import collection_paused
from lorebase.grpc_problems import problems_as_status
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.vault import holds_refs
from lorebase_keeper.access import Access, Principal, readable
from lorebase_keeper.access.policy import require_clearances, require_every_kind, require_within, within
from lorebase_keeper.api.targets import Found, load_target
from lorebase_keeper.domains import Domain
from lorebase_keeper.governance import check_session, record_step
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.vault import reveal_reply

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


def _answer(endpoint: Endpoint, answer: Answer) -> pb.Reply:
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


# --- the typed request -------------------------------------------------------------------------


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


def _field(request: Any, path: str) -> Any:
    """A request field by its path (`branch`, `body.source`), None when absent."""
    value = request
    for part in path.split("."):
        value = getattr(value, part, None)
    return value


def _request_branch(request: Any) -> str:
    """The request's branch: its `branch` parameter or body member ("" when it names none)."""
    branch = _field(request, "branch")
    if branch is None:
        branch = _field(request, "body.branch")
    return branch if isinstance(branch, str) else ""


# --- the policy --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What the policy point established for a call in a Domain."""

    domain: Domain
    access: Access
    branch: str
    target: Found


async def enforce(rt: Runtime, endpoint: Endpoint, request: Any, principal: Principal) -> Decision:
    """The policy of an endpoint that needs a grant in the Domain its request names (Who.GRANT), in
    the module docstring's order; a Problem when it does not hold."""
    policy = endpoint.policy
    try:
        domain = await rt.domains.get(request.domain)
        access = await rt.auth.access(principal, domain.id)
        if not principal.is_admin and not access.grants:
            # A Domain the caller holds no grant in answers like an unknown one.
            raise rt.domains.unknown(domain.name)
    except Problem as problem:
        if problem.status == 404 and policy.ungranted == 403 and not principal.is_admin:
            raise Problem(
                403,
                "forbidden",
                f"{principal.id} holds no grant in Domain {request.domain!r}; ask a Domain admin for one",
                permission="data.read",
            ) from None
        raise
    branch = _request_branch(request) or domain.default_branch
    # Needs on a branch the request names are checked before its target is looked up, so a caller
    # without them learns nothing of what exists (unless an owner may act in their place: who owns
    # the target is known once it is found).
    first = () if policy.owner is not None else tuple(n for n in policy.needs if n.on not in TARGET_BRANCHES)
    _require_needs(access, first, request, domain, Found(), branch)
    found = await load_target(rt, domain, access, policy.target, request)
    if policy.scope is Scope.TARGET:
        _require_readable(access, domain, found, branch)
    owner = policy.owner is not None and principal.id in found.owners
    needs = policy.owner_needs if owner else policy.needs
    _require_needs(access, tuple(n for n in needs if n not in first), request, domain, found, branch)

    if policy.scope is Scope.KIND:
        name = _field(request, policy.kind)
        if name and readable(access, domain, branch).kind(name) is None:
            raise Problem(
                404, "not-found", f"unknown Kind {name!r}; GET /schema lists the Kinds you may read"
            )
    elif policy.scope is Scope.EVERY_KIND:
        require_every_kind(access, _branch_of(policy.needs[0], request, domain, found, branch))
    if found.relations:
        view = readable(access, domain, next(iter(found.branches.values()), branch))
        if any(r not in view.relations for r in found.relations):
            raise Problem(
                403,
                "forbidden",
                f"{principal.id} may not read every Relation whose Links this would move; ask someone "
                "whose grant reads every Kind",
                permission="data.read",
            )
    if policy.delegates is Delegation.GRANT:
        _require_delegation(access, domain, request, found)
    elif policy.delegates is Delegation.CLEARANCES:
        require_clearances(access, domain.default_branch, _field(request, "body.clearances") or ())
    return Decision(domain, access, branch, found)


# The `on` of a need that names the branch of the request's target (lorebase.contract.policy.Need).
TARGET_BRANCHES = frozenset({"tag", "revision", "candidate", "proposal.target", "proposal.source"})


def _require_needs(
    access: Access, needs: tuple[Need, ...], request: Any, domain: Domain, found: Found, branch: str
) -> None:
    for need in needs:
        if need.when and all(_field(request, w) is None for w in need.when):
            continue
        on = _branch_of(need, request, domain, found, branch)
        for permission in _permissions(need, found):
            access.require(permission, on)


def _branch_of(need: Need, request: Any, domain: Domain, found: Found, branch: str) -> str:
    if need.on == "branch":
        return branch
    if need.on == "default":
        return domain.default_branch
    if need.on in found.branches:
        return found.branches[need.on]
    value = _field(request, need.on)
    return value if isinstance(value, str) and value else domain.default_branch


def _permissions(need: Need, found: Found) -> tuple[str, ...]:
    """An Operation that declares its own permissions needs those instead of operation.execute."""
    if need.permission is Permission.OPERATION_EXECUTE and found.permissions:
        return found.permissions
    return (need.permission.value,)


def _require_readable(access: Access, domain: Domain, found: Found, branch: str) -> None:
    """A target on a branch the caller may not read (its own, else the request's), or holding a Kind
    it may not read there, is absent."""
    on = next(iter(found.branches.values()), branch)
    if not access.can(Permission.DATA_READ, on):
        raise _absent(found)
    kinds = readable(access, domain, on).kinds
    if any(kind not in kinds for kind in found.kinds):
        raise _absent(found)


def _absent(found: Found) -> Problem:
    assert found.absent is not None, "a target read for its scope says how it answers when absent"
    return found.absent


def _require_delegation(access: Access, domain: Domain, request: Any, found: Found) -> None:
    """A grant made (the body) or withdrawn (the target) lies within the caller's own; one it could
    not have made answers like an unknown grant when withdrawn."""
    if found.row is not None:
        row = found.row
        if not within(access, row.role, row.branches, row.kinds):
            raise _absent(found)
        return
    body = request.body
    require_within(access, body.role, body.branches, body.kinds)


# --- the servicer's methods --------------------------------------------------------------------


async def _principal(rt: Runtime, metadata: Mapping[str, str]) -> Principal:
    return await rt.auth.authenticate(metadata.get("authorization"))


async def dispatch(rt: Runtime, endpoint: Endpoint, message: Any, metadata: Mapping[str, str]) -> pb.Reply:
    """Steps 1 to 4 of the module docstring; the answer before vault refs are revealed."""
    policy = endpoint.policy
    principal = None
    if policy.who is not Who.ANYONE:
        principal = await _principal(rt, metadata)
        if rt.limits is not None and not principal.is_admin:
            rt.limits.charge(principal.id, "writes" if endpoint.writes else "reads")
    request = request_of(endpoint, message)
    function = HANDLERS[endpoint.name]
    if policy.who is Who.GRANT:
        assert principal is not None
        decision = await enforce(rt, endpoint, request, principal)
        call: Call[Any] = DomainCall(
            rt,
            endpoint,
            request,
            principal,
            metadata,
            decision.domain,
            decision.access,
            decision.branch,
            decision.target,
        )
    else:
        if policy.who is Who.ADMIN and (principal is None or not principal.is_admin):
            raise Problem(
                403,
                "forbidden",
                f"only the admin principal {ADMIN_PRINCIPAL} may {endpoint.summary[0].lower()}"
                f"{endpoint.summary[1:]}",
            )
        call = Call(rt, endpoint, request, principal, metadata)
    answer = _answer(endpoint, await function(call))
    if rt.settings.model.keeper.check_answers:
        check_answer(endpoint, answer)
    return answer


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


def endpoint_for(endpoints: list[Endpoint], message: Any) -> Endpoint:
    """The endpoint of a message whose RPC several endpoints share (GET /health and GET
    /kinds/{kind}/health): the one with the most path parameters that are all present."""
    for endpoint in endpoints:
        if all(getattr(message, p.name) for p in endpoint.parameters if p.where == "path"):
            return endpoint
    return endpoints[-1]


def rpc_method(rpc: str, endpoints: list[Endpoint]) -> Callable[..., Awaitable[pb.Reply]]:
    """The servicer method of `rpc`: dispatch, then reveal vault refs and trace the step."""
    ordered = sorted(endpoints, key=lambda e: -sum(p.where == "path" for p in e.parameters))

    async def method(self: Any, message: Any, context: grpc.aio.ServicerContext) -> pb.Reply:
        rt: Runtime = self.rt
        metadata = dict(context.invocation_metadata() or ())
        endpoint = ordered[0] if len(ordered) == 1 else endpoint_for(ordered, message)
        session = metadata.get("lorebase-session") if endpoint.traced else None
        async with problems_as_status(context, "keeper", rpc):
            started = time.perf_counter()
            try:
                if endpoint.bulk:  # its objects live until it commits: no collection walks them meanwhile
                    with collection_paused():
                        answer = await dispatch(rt, endpoint, message, metadata)
                else:
                    answer = await dispatch(rt, endpoint, message, metadata)
            except Problem as problem:
                if session:
                    await _trace(rt, metadata, session, rpc, message, problem.status, started, None)
                raise
            if session:
                await _trace(rt, metadata, session, rpc, message, answer.status, started, answer.body)
            if holds_refs(answer.body):
                answer = await _reveal(rt, metadata, message, answer)
            return answer

    method.__name__ = rpc
    return method


async def _trace(
    rt: Runtime,
    metadata: Mapping[str, str],
    session: str,
    rpc: str,
    message: Any,
    status: int,
    started: float,
    body: bytes | None,
) -> None:
    try:
        principal = await _principal(rt, metadata)
        check_session(session)
    except Problem:
        return  # an unauthenticated call or a bad session id is not traced
    await record_step(
        rt,
        session=session,
        principal=principal,
        call=rpc,
        request=message,
        status=status,
        latency_ms=(time.perf_counter() - started) * 1000,
        reply_body=body,
    )


async def _reveal(rt: Runtime, metadata: Mapping[str, str], message: Any, answer: pb.Reply) -> pb.Reply:
    """The answer with its vault refs revealed for the caller in the Domain the request names (none
    named: every ref masked)."""
    domain: Domain | None = None
    permissions: frozenset[str] = frozenset()
    name = getattr(message, "domain", "")
    if isinstance(name, str) and name:
        principal = await _principal(rt, metadata)
        domain = await rt.domains.get(name)
        access = await rt.auth.access(principal, domain.id)
        permissions = access.permissions(_request_branch(message) or domain.default_branch)
    return await reveal_reply(rt.vault, answer, domain=domain, permissions=permissions)


def rpc_methods(service: str) -> dict[str, Callable[..., Awaitable[pb.Reply]]]:
    """The servicer methods of every RPC of `service` that endpoints call, made from the endpoints."""
    by_rpc: dict[str, list[Endpoint]] = {}
    for endpoint in ENDPOINTS:
        if endpoint.service == service:
            by_rpc.setdefault(endpoint.rpc, []).append(endpoint)
    return {rpc: rpc_method(rpc, endpoints) for rpc, endpoints in by_rpc.items()}


def check_bindings(service: str) -> None:
    """Every endpoint of `service` has a handler and every handler an endpoint (at import)."""
    declared = {e.name for e in ENDPOINTS if e.service == service}
    missing = sorted(declared - set(HANDLERS))
    if missing:
        raise TypeError(f"endpoints of {service} without a handler: {missing}")


__all__ = [
    "HANDLERS",
    "Answer",
    "Call",
    "Decision",
    "DomainCall",
    "check_bindings",
    "dispatch",
    "enforce",
    "handler",
    "reply",
    "request_of",
    "rpc_methods",
]
