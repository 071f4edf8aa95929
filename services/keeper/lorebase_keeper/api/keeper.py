"""The Keeper gRPC servicer: parse, authenticate, authorize, call down, and turn problems into statuses."""

from __future__ import annotations

import grpc

from lorebase.contract import BY_NAME
from lorebase.contract.admin import ListSessions, Note
from lorebase.contract.decode import convert_parameters
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc
from lorebase_keeper.access import web_sessions
from lorebase_keeper.api.admin import AdminRpcs
from lorebase_keeper.api.branches import BranchRpcs
from lorebase_keeper.api.erasures import ErasureRpcs
from lorebase_keeper.api.proposals import ProposalRpcs
from lorebase_keeper.api.reads import ReadRpcs
from lorebase_keeper.api.reconciliation import ReconciliationRpcs
from lorebase_keeper.api.rpc import body_of, reply, rpc
from lorebase_keeper.api.suggestions import SuggestionRpcs
from lorebase_keeper.api.writes import WriteRpcs
from lorebase_keeper.domains import check_branch_name
from lorebase_keeper.governance import add_note, get_session, list_sessions
from lorebase_keeper.proposals import ProposalChecks
from lorebase_keeper.runtime import Runtime


class KeeperServicer(
    AdminRpcs,
    BranchRpcs,
    ErasureRpcs,
    ProposalRpcs,
    WriteRpcs,
    SuggestionRpcs,
    ReconciliationRpcs,
    ReadRpcs,
    keeper_pb2_grpc.KeeperServicer,
):
    """Every Keeper RPC: agent sessions, web sessions and the feed's read check here, the others by
    area (api/*.py)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        # Open Proposals are tried again when their source or target moves (proposals/checks.py).
        rt.moves.listen(ProposalChecks(rt))

    @rpc
    async def AddSessionNote(
        self, request: pb.SessionNoteRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        note = body_of("add_session_note", request.body, Note)
        principal = await self._principal(context)
        return reply(await add_note(self.rt, principal, request.session, note), status=201)

    @rpc
    async def GetSession(self, request: pb.SessionRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        principal = await self._principal(context)
        return reply(await get_session(self.rt, principal, request.session))

    @rpc
    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        # The parameters under the rules the gateway applies at the edge (a gRPC caller skips it).
        sent = {"domain": request.domain, "principal": request.principal, "before": request.before}
        raw = {name: value for name, value in sent.items() if value} | {"limit": request.limit}
        query = ListSessions(**convert_parameters(BY_NAME["list_sessions"], raw))
        principal = await self._principal(context)
        return reply(await list_sessions(self.rt, principal, query))

    @rpc
    async def StartWebSession(
        self, request: pb.WebSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        """Sign in: the credential is the key; the token travels in a header, never in the body."""
        answer, token = await web_sessions.start(self.rt, _authorization(context))
        return reply(answer, status=201, headers={web_sessions.TOKEN_HEADER: token})

    @rpc
    async def GetWebSession(
        self, request: pb.WebSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        return reply(await web_sessions.describe(self.rt, _authorization(context)))

    @rpc
    async def EndWebSession(
        self, request: pb.WebSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        await web_sessions.end(self.rt, _authorization(context))
        return pb.Reply(body=b"", content_type="application/json", status=204)

    @rpc
    async def AuthorizeRead(
        self, request: pb.AuthorizeReadRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        """For the feed: may the caller read this branch, and is any of its grants unnarrowed?"""
        domain, access = await self._domain(context, request.domain)
        branch = check_branch_name(request.branch or domain.default_branch)
        access.require(request.permission or "data.read", branch)
        return reply(
            {
                "principal": access.principal.id,
                "domain": domain.name,
                "domain_id": domain.id,
                "branch": branch,
                "narrowed": access.narrowed(branch),
                "kinds": list(domain.schema.kinds),
                "permissions": sorted(access.permissions(branch)),
            }
        )


def _authorization(context: grpc.aio.ServicerContext) -> str | None:
    return dict(context.invocation_metadata() or ()).get("authorization")


__all__ = ["KeeperServicer"]
