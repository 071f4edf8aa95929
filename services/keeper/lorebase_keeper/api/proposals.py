"""Keeper RPCs of Proposals and their Conflicts."""

from __future__ import annotations

import grpc

from lorebase.contract.proposals import NewProposal, Resolution, Review
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import proposals
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc


class ProposalRpcs(KeeperRpc):
    """Proposals and their Conflicts (proposals/)."""

    @rpc
    async def CreateProposal(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        new = body_of("create_proposal", request.body, NewProposal)
        domain, access = await self._domain(context, request.domain)
        document = await proposals.create_proposal(self.rt, access, domain, new)
        return reply(document, status=201, revision="")

    @rpc
    async def ListProposals(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.list_proposals(
            self.rt,
            access,
            domain,
            status=request.status,
            assigned=request.assigned,
            limit=request.limit,
            cursor=request.cursor,
        )
        return reply(document, revision="")

    @rpc
    async def GetProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await proposals.get_proposal(self.rt, access, domain, request.proposal), revision="")

    @rpc
    async def ReviewProposal(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        review = body_of("review_proposal", request.body, Review)
        domain, access = await self._domain(context, request.domain)
        document = await proposals.review_proposal(self.rt, access, domain, request.proposal, review)
        return reply(document, revision="")

    @rpc
    async def MergeProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await proposals.merge_proposal(self.rt, access, domain, request.proposal)
        return reply(document, revision=document.get("merged_revision") or "")

    @rpc
    async def CloseProposal(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await proposals.close_proposal(self.rt, access, domain, request.proposal), revision="")

    @rpc
    async def ListConflicts(self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await proposals.list_conflicts(self.rt, access, domain, request.proposal), revision="")

    @rpc
    async def ResolveConflict(
        self, request: pb.ProposalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        resolution = body_of("resolve_conflict", request.body, Resolution)
        domain, access = await self._domain(context, request.domain)
        document = await proposals.resolve_conflict(
            self.rt, access, domain, request.proposal, request.conflict, resolution
        )
        return reply(document, revision="")


__all__ = ["ProposalRpcs"]
