"""The Keeper gRPC servicer, made from the endpoint declarations (api/dispatch.py), and the handlers
of agent sessions, web sessions and the feed's policy check.

Every RPC an endpoint calls is a method made by the dispatcher; the handler modules below bind
their functions to endpoints by name. `Authorize` is the one RPC no endpoint calls: the feed asks
it whether a call to one of the feed's endpoints passes that endpoint's policy, so keeper decides
for the feed exactly as for itself."""

from __future__ import annotations

from typing import Any

import grpc
import orjson
from google.protobuf.message import DecodeError

from lorebase.clients.calls import request_message
from lorebase.contract import BY_NAME
from lorebase.contract.admin import AddSessionNote, GetSession, ListSessions
from lorebase.contract.policy import Who
from lorebase.contract.web import StartWebSession, WebSessionCall
from lorebase.grpc_problems import problems_as_status
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc
from lorebase_keeper.access import readable
from lorebase_keeper.admin import web_sessions
from lorebase_keeper.api import (
    admin,
    branches,
    erasures,
    proposals,
    reads,
    reconciliation,
    schema_changes,
    suggestions,
    writes,
)
from lorebase_keeper.api.call import Call, handler, reply, request_of
from lorebase_keeper.api.dispatch import enforce
from lorebase_keeper.api.servicer import check_bindings, rpc_methods
from lorebase_keeper.domains import check_branch_name
from lorebase_keeper.governance import add_note, get_session, list_sessions
from lorebase_keeper.proposals import ProposalChecks
from lorebase_keeper.reads import KEPT_COUNTS
from lorebase_keeper.runtime import Runtime

# The handler modules bind their functions to endpoints when imported.
AREAS = (admin, branches, erasures, proposals, reads, reconciliation, schema_changes, suggestions, writes)


@handler("add_session_note")
async def add_session_note(call: Call[AddSessionNote]) -> dict[str, Any]:
    return await add_note(call.rt, call.caller, call.request.session, call.request.body)


@handler("get_session")
async def read_session(call: Call[GetSession]) -> dict[str, Any]:
    return await get_session(call.rt, call.caller, call.request.session)


@handler("list_sessions")
async def read_sessions(call: Call[ListSessions]) -> dict[str, Any]:
    return await list_sessions(call.rt, call.caller, call.request)


@handler("start_web_session")
async def start_web_session(call: Call[StartWebSession]) -> pb.Reply:
    """Sign in: the body's key is the credential; the token travels in a header, never in the body."""
    answer, token = await web_sessions.start(call.rt, f"Bearer {call.request.body.key}")
    return reply(answer, status=201, headers={web_sessions.TOKEN_HEADER: token})


@handler("get_web_session")
async def get_web_session(call: Call[WebSessionCall]) -> dict[str, Any]:
    return await web_sessions.describe(call.rt, call.authorization)


@handler("end_web_session")
async def end_web_session(call: Call[WebSessionCall]) -> pb.Reply:
    await web_sessions.end(call.rt, call.authorization)
    return pb.Reply(body=b"", content_type="application/json", status=204)


class KeeperServicer(keeper_pb2_grpc.KeeperServicer):
    """Every Keeper RPC (its methods are set below, one per RPC the endpoints call)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # Open Proposals are tried again when their source or target moves (proposals/checks.py).
        rt.moves.listen(ProposalChecks(rt))
        # A schema change set hands resolve's kept value counts those of its new head (writes/kept_counts.py).
        if KEPT_COUNTS not in rt.kept_counts:
            rt.kept_counts.append(KEPT_COUNTS)

    async def Authorize(self, message: pb.AuthorizeRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        """For the feed: whether a call to one of its endpoints passes that endpoint's policy."""
        async with problems_as_status(context, "keeper", "Authorize"):
            return await authorize(self.rt, message, dict(context.invocation_metadata() or ()))
        raise AssertionError("unreachable")  # problems_as_status aborts the call

    async def Authenticate(
        self, message: pb.AuthenticateRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        """For the gateway: the principal of the call's credential (401 for none)."""
        async with problems_as_status(context, "keeper", "Authenticate"):
            metadata = dict(context.invocation_metadata() or ())
            principal = await self.rt.auth.authenticate(metadata.get("authorization"))
            return reply({"principal": principal.id})
        raise AssertionError("unreachable")  # problems_as_status aborts the call

    async def AuthorizeRead(
        self, message: pb.AuthorizeReadRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        """Deprecated, for one release: the previous release's feed (v0.9.0) asks this while a rolling
        upgrade runs it beside this keeper. Decided as `Authorize` decides for the endpoint the
        permission stands for (the same policy point), answered in the previous form."""
        async with problems_as_status(context, "keeper", "AuthorizeRead"):
            return await authorize_read(self.rt, message, dict(context.invocation_metadata() or ()))
        raise AssertionError("unreachable")  # problems_as_status aborts the call


# What the previous release's feed asked AuthorizeRead for, and the endpoint whose policy decides it.
_PREVIOUS_PERMISSIONS = {"": "changes", "data.read": "changes", "domain.settings": "list_webhooks"}


async def authorize_read(rt: Runtime, message: pb.AuthorizeReadRequest, metadata: dict[str, Any]) -> pb.Reply:
    name = _PREVIOUS_PERMISSIONS.get(message.permission)
    if name is None:
        raise Problem(
            403,
            "forbidden",
            f"{message.permission} is checked by this keeper through its endpoints only: retry once the "
            "feed runs this release",
        )
    endpoint = BY_NAME[name]
    fields = (
        {"domain": message.domain}
        if name == "list_webhooks"
        else {
            "domain": message.domain,
            "branch": message.branch,
        }
    )
    request = request_message(endpoint)(**fields).SerializeToString()
    answer = await authorize(rt, pb.AuthorizeRequest(endpoint=name, request=request), metadata)
    document = orjson.loads(answer.body)
    # The endpoint's policy reads through a grant of every Kind: none narrowed to Kinds passed it.
    return reply({**document, "narrowed": False})


async def authorize(rt: Runtime, message: pb.AuthorizeRequest, metadata: dict[str, Any]) -> pb.Reply:
    endpoint = BY_NAME.get(message.endpoint)
    if endpoint is None or endpoint.service != "feed" or endpoint.policy.who is not Who.GRANT:
        raise Problem(400, "invalid-parameter", f"{message.endpoint!r} is not an endpoint the feed serves")
    principal = await rt.auth.authenticate(metadata.get("authorization"))
    if rt.limits is not None and not principal.is_admin:
        rt.limits.charge(principal.id, "writes" if endpoint.writes else "reads")
    try:
        inner = request_message(endpoint).FromString(message.request)
    except DecodeError:
        raise Problem(400, "invalid-parameter", f"the request is not a message of {endpoint.rpc}") from None
    decision = await enforce(rt, endpoint, request_of(endpoint, inner), principal)
    branch = check_branch_name(decision.branch)
    return reply(
        {
            "principal": principal.id,
            "domain": decision.domain.name,
            "domain_id": decision.domain.id,
            "branch": branch,
            "kinds": list(readable(decision.access, decision.domain, branch).kinds),
            "permissions": sorted(decision.access.permissions(branch)),
        }
    )


for _rpc, _method in rpc_methods("keeper").items():
    setattr(KeeperServicer, _rpc, _method)
check_bindings("keeper")


__all__ = ["KeeperServicer", "authorize"]
