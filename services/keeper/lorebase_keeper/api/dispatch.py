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
4. runs the handler bound to the endpoint (`handler`, api/call.py) with a `Call`: the typed request
   and what the policy found.

The servicer's methods around this (api/servicer.py) reveal vault refs and trace the session step. A
handler cannot be reached any other way: those methods are made from the declarations, and the
module that assembles them (api/keeper.py) fails at import when a keeper endpoint has no handler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lorebase.contract import Endpoint
from lorebase.contract.policy import Delegation, Need, Permission, Scope, Who
from lorebase.credentials import ADMIN_PRINCIPAL
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.access import Access, Principal, readable
from lorebase_keeper.access.policy import require_clearances, require_every_kind, require_within, within
from lorebase_keeper.api.call import (
    HANDLERS,
    Call,
    DomainCall,
    answer_of,
    check_answer,
    field_of,
    request_branch,
    request_of,
)
from lorebase_keeper.api.targets import Found, load_target
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


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
    branch = request_branch(request) or domain.default_branch
    domain = await _schema_of_request(rt, domain, request, branch)
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
        name = field_of(request, policy.kind)
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
        require_clearances(access, domain.default_branch, field_of(request, "body.clearances") or ())
    return Decision(domain, access, branch, found)


async def _schema_of_request(rt: Runtime, domain: Domain, request: Any, branch: str) -> Domain:
    """The Domain with the schema the request reads or writes under: that of the Revision its `at`
    names, else that of its branch's head (docs/schema.md, "Changing a schema"). An `at` that names
    no Revision on the branch keeps the branch's: the read itself answers why."""
    at = field_of(request, "at")
    if at is None:
        at = field_of(request, "body.at")
    if isinstance(at, str) and at:
        try:
            digest = await rt.db.read("schema_at", _schema_at, domain, branch, at)
        except Problem:
            digest = ""
        if digest != "":
            return await rt.domains.at_version(domain, digest)
    return await rt.domains.on_branch(domain, branch)


async def _schema_at(txn: Txn, domain: Domain, branch: str, at: str) -> str | None:
    point = await read_point(txn, domain, branch, at)
    return point.schema_digest


# The `on` of a need that names the branch of the request's target (lorebase.contract.policy.Need).
TARGET_BRANCHES = frozenset(
    {"tag", "revision", "candidate", "proposal.target", "proposal.source", "schema_change"}
)


def _require_needs(
    access: Access, needs: tuple[Need, ...], request: Any, domain: Domain, found: Found, branch: str
) -> None:
    for need in needs:
        if need.when and all(field_of(request, w) is None for w in need.when):
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
    value = field_of(request, need.on)
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
    answer = answer_of(endpoint, await function(call))
    if rt.settings.model.keeper.check_answers:
        check_answer(endpoint, answer)
    return answer


__all__ = ["Decision", "dispatch", "enforce"]
