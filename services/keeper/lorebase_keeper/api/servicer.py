"""The servicer methods of keeper's RPCs, made from the endpoint declarations: each dispatches the
call (api/dispatch.py), then reveals vault refs in the answer as the caller may see them and keeps
the call as a step of the caller's agent session (`lorebase-session`) unless the declaration says
`traced=False`. A Problem anywhere becomes its gRPC status (lorebase.grpc_problems)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.event_loop import collection_paused
from lorebase.grpc_problems import problems_as_status
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.vault import holds_refs
from lorebase_keeper.api.call import HANDLERS, request_branch
from lorebase_keeper.api.dispatch import dispatch
from lorebase_keeper.domains import Domain
from lorebase_keeper.governance import check_session, record_step
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.vault import reveal_reply


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
                    await _trace(rt, metadata, session, rpc, message, problem.status, started, None, problem)
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
    problem: Problem | None = None,
) -> None:
    try:
        principal = await rt.auth.authenticate(metadata.get("authorization"))
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
        problem=problem,
    )


async def _reveal(rt: Runtime, metadata: Mapping[str, str], message: Any, answer: pb.Reply) -> pb.Reply:
    """The answer with its vault refs revealed for the caller in the Domain the request names (none
    named: every ref masked)."""
    domain: Domain | None = None
    permissions: frozenset[str] = frozenset()
    name = getattr(message, "domain", "")
    if isinstance(name, str) and name:
        principal = await rt.auth.authenticate(metadata.get("authorization"))
        domain = await rt.domains.get(name)
        access = await rt.auth.access(principal, domain.id)
        permissions = access.permissions(request_branch(message) or domain.default_branch)
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


__all__ = ["check_bindings", "rpc_methods"]
