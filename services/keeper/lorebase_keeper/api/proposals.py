"""Handlers of Proposals and their Conflicts (proposals/). A Proposal's answer describes the
Proposal, not a Revision: none goes in `Lorebase-Revision` but the one a merge made."""

from __future__ import annotations

from lorebase.contract.proposals import (
    CreateProposal,
    ListProposals,
    ProposalCall,
    ResolveConflict,
    ReviewProposal,
)
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import proposals
from lorebase_keeper.api.call import DomainCall, handler, reply


@handler("create_proposal")
async def create_proposal(call: DomainCall[CreateProposal]) -> pb.Reply:
    document = await proposals.create_proposal(call.rt, call.access, call.domain, call.request.body)
    return reply(document, status=201, revision="")


@handler("list_proposals")
async def list_proposals(call: DomainCall[ListProposals]) -> pb.Reply:
    request = call.request
    document = await proposals.list_proposals(
        call.rt,
        call.access,
        call.domain,
        status=request.status,
        assigned=request.assigned,
        limit=request.limit,
        cursor=request.cursor,
    )
    return reply(document, revision="")


@handler("get_proposal")
async def get_proposal(call: DomainCall[ProposalCall]) -> pb.Reply:
    document = await proposals.get_proposal(call.rt, call.access, call.domain, call.request.proposal)
    return reply(document, revision="")


@handler("review_proposal")
async def review_proposal(call: DomainCall[ReviewProposal]) -> pb.Reply:
    request = call.request
    document = await proposals.review_proposal(
        call.rt, call.access, call.domain, request.proposal, request.body
    )
    return reply(document, revision="")


@handler("merge_proposal")
async def merge_proposal(call: DomainCall[ProposalCall]) -> pb.Reply:
    document = await proposals.merge_proposal(call.rt, call.access, call.domain, call.request.proposal)
    return reply(document, revision=document.get("merged_revision") or "")


@handler("close_proposal")
async def close_proposal(call: DomainCall[ProposalCall]) -> pb.Reply:
    document = await proposals.close_proposal(call.rt, call.access, call.domain, call.request.proposal)
    return reply(document, revision="")


@handler("list_conflicts")
async def list_conflicts(call: DomainCall[ProposalCall]) -> pb.Reply:
    document = await proposals.list_conflicts(call.rt, call.access, call.domain, call.request.proposal)
    return reply(document, revision="")


@handler("resolve_conflict")
async def resolve_conflict(call: DomainCall[ResolveConflict]) -> pb.Reply:
    request = call.request
    document = await proposals.resolve_conflict(
        call.rt, call.access, call.domain, request.proposal, request.conflict, request.body
    )
    return reply(document, revision="")
