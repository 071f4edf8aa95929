"""Proposals: open, list, review, merge and close them, and resolve their Conflicts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers
from lorebase.contract._base import DOMAIN, PROPOSAL, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import BranchRef, Cursor, DomainName, Name, NewBranchName, bounded, written
from lorebase.contract.policy import Need, Owner, P, Scope, Target, grant

Title = Annotated[str, written(200, "What the Proposal changes: not only whitespace")]
Description = Annotated[str, bounded(20000)]


class NewProposal(Body, frozen=True, kw_only=True):
    source: NewBranchName  # a branch of the Domain (its grammar; not empty)
    target: BranchRef | None = None
    title: Title
    description: Description | None = None


class CreateProposal(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewProposal


class ListProposals(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    status: Annotated[Literal["", "open", "merged", "closed", "all"], Query] = ""
    assigned: Annotated[Literal["", "me"], Query] = ""
    limit: Annotated[Annotated[int, Meta(ge=0, le=200)], Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class ProposalCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    proposal: Annotated[Name, Path]


class Review(Body, frozen=True, kw_only=True):
    decision: Literal["approve", "request_changes"]
    comment: Description | None = None


class ReviewProposal(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    proposal: Annotated[Name, Path]
    body: Review


class Resolution(Body, frozen=True, kw_only=True):
    """A resolution of a Conflict. `value` goes with `"resolution": "value"` only, and there even a
    null is a value: absent and null differ, so its default is UNSET, not None."""

    resolution: Literal["ours", "theirs", "value"]
    value: Any | msgspec.UnsetType = msgspec.UNSET


class ResolveConflict(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    proposal: Annotated[Name, Path]
    conflict: Annotated[Name, Path]
    body: Resolution


ENDPOINTS = [
    Endpoint(
        "create_proposal",
        "POST",
        DOMAIN + "/proposals",
        "keeper",
        "CreateProposal",
        CreateProposal,
        "Propose to merge a branch into another",
        "proposals",
        policy=grant(Need(P.PROPOSAL_CREATE, "body.source"), Need(P.DATA_READ, "body.target")),
        success=201,
        problems=(409,),
        response=answers.proposals.ProposalDoc,
    ),
    Endpoint(
        "list_proposals",
        "GET",
        DOMAIN + "/proposals",
        "keeper",
        "ListProposals",
        ListProposals,
        "Proposals, by status; assigned=me: those the caller stewards",
        "proposals",
        policy=grant(),
        response=answers.proposals.ProposalList,
    ),
    Endpoint(
        "get_proposal",
        "GET",
        PROPOSAL,
        "keeper",
        "GetProposal",
        ProposalCall,
        "A Proposal: its diff summary, reviews, blockers and next steps",
        "proposals",
        policy=grant(Need(P.DATA_READ, "proposal.target"), scope=Scope.TARGET, target=Target.PROPOSAL),
        response=answers.proposals.ProposalDoc,
    ),
    Endpoint(
        "review_proposal",
        "POST",
        PROPOSAL + "/reviews",
        "keeper",
        "ReviewProposal",
        ReviewProposal,
        "Approve or request changes",
        "proposals",
        policy=grant(Need(P.PROPOSAL_REVIEW, "proposal.target"), scope=Scope.TARGET, target=Target.PROPOSAL),
        problems=(409,),
        response=answers.proposals.ProposalDoc,
    ),
    Endpoint(
        "merge_proposal",
        "POST",
        PROPOSAL + "/merge",
        "keeper",
        "MergeProposal",
        ProposalCall,
        "Merge a Proposal (or record its Conflicts)",
        "proposals",
        policy=grant(Need(P.PROPOSAL_MERGE, "proposal.target"), scope=Scope.TARGET, target=Target.PROPOSAL),
        problems=(409,),
        body_optional=True,
        response=answers.proposals.ProposalDoc,
    ),
    Endpoint(
        "close_proposal",
        "POST",
        PROPOSAL + "/close",
        "keeper",
        "CloseProposal",
        ProposalCall,
        "Close a Proposal without merging",
        "proposals",
        policy=grant(
            Need(P.PROPOSAL_MERGE, "proposal.target"),
            scope=Scope.TARGET,
            target=Target.PROPOSAL,
            owner=Owner.AUTHOR,
        ),
        problems=(409,),
        body_optional=True,
        response=answers.proposals.ProposalDoc,
    ),
    Endpoint(
        "list_conflicts",
        "GET",
        PROPOSAL + "/conflicts",
        "keeper",
        "ListConflicts",
        ProposalCall,
        "The Conflicts of a Proposal with its target",
        "proposals",
        policy=grant(Need(P.DATA_READ, "proposal.target"), scope=Scope.TARGET, target=Target.PROPOSAL),
        response=answers.proposals.ConflictList,
    ),
    Endpoint(
        "resolve_conflict",
        "POST",
        PROPOSAL + "/conflicts/{conflict}/resolve",
        "keeper",
        "ResolveConflict",
        ResolveConflict,
        "Resolve a Conflict with ours, theirs or a value",
        "proposals",
        policy=grant(
            Need(P.PROPOSAL_MERGE, "proposal.target"),
            scope=Scope.TARGET,
            target=Target.PROPOSAL,
            owner=Owner.AUTHOR,
            owner_needs=(Need(P.PROPOSAL_CREATE, "proposal.source"),),
        ),
        problems=(409,),
        response=answers.proposals.Conflict,
    ),
]
