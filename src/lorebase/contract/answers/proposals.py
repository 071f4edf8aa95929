"""What the Proposal endpoints answer: the Proposal document (keeper's proposals/state.py; every
Proposal endpoint but the Conflict ones answers it), lists, and Conflicts (proposals/conflicts.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import (
    Answer,
    Approval,
    Attempt,
    ConflictResolution,
    Count,
    Cursor,
    Next,
    Ref,
    RevisionId,
    Timestamp,
)


class ExecutionRef(Answer, kw_only=True):
    """An Operation execution a task write added to the Proposal."""

    invocation_id: str
    operation: str
    revision: RevisionId | None
    principal: str
    at: Timestamp


class ReviewDoc(Answer, kw_only=True):
    """A review decision."""

    reviewer: str
    decision: Literal["approve", "request_changes"]
    comment: str | None
    at: Timestamp


class ConflictCounts(Answer, kw_only=True):
    """The Proposal's Conflicts with its target, open and resolved."""

    open: Count
    resolved: Count


class Mergeable(Answer, kw_only=True):
    """Whether the Proposal can merge now, and what blocks it (approvals-pending,
    review-policy-needs-approval, changes-requested, open-conflicts)."""

    mergeable: bool
    blockers: list[str]


class ProposalDoc(Answer, kw_only=True):
    """A Proposal to merge a source branch into a target: its Kinds and their stewards, the task
    writes in it, approvals and reviews, Conflicts, the latest merge attempt, what blocks the merge
    and the calls that move it forward. Merging or closing also says whether the source branch was
    deleted (a task branch is)."""

    id: str
    domain: str
    title: str
    description: str
    status: Literal["open", "merged", "closed"]
    author: str
    source_ref: str
    target_ref: str
    task: str | None
    intent: str | None
    kinds: list[str]
    stewards: list[str]
    executions: list[ExecutionRef]
    approval: Approval
    reviews: list[ReviewDoc]
    conflicts: ConflictCounts
    attempt: Attempt | None
    merge: Mergeable
    merged_revision: RevisionId | None
    merged_by: str | None
    merged_at: Timestamp | None
    closed_by: str | None
    closed_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    url: str
    next: list[Next]
    branch_deleted: bool | UnsetType = UNSET


class ProposalList(Answer, kw_only=True):
    """Proposals the caller may see (it may read the target and every Kind they change)."""

    domain: str
    proposals: list[ProposalDoc]
    next_cursor: Cursor


class Conflict(Answer, kw_only=True):
    """A Conflict between the source and the target: the base, the target's (ours) and the source's
    (theirs) value or values. Values the caller may not read are null and `redacted` is true. A
    schema Conflict (entity `schema`) names the schema element both sides changed; its ours and
    theirs are the element's definitions."""

    id: str
    code: Annotated[
        str,
        Meta(
            description="both_changed, unique_taken, delete_vs_change, link_end_deleted, required_missing, "
            "schema_conflict, schema_migration (a value that does not fit the schema it lands in; theirs "
            "says why and on which branch to change it), schema_cleared..."
        ),
    ]
    entity: Literal["record", "link", "schema"]
    ref: Annotated[Ref, Meta(description="Kind/key, or relation/from->to for a Link")]
    kind: str | UnsetType = UNSET
    relation: str | UnsetType = UNSET
    element: Annotated[
        str | UnsetType, Meta(description="a schema Conflict's element: Supplier.tier, relation:flags")
    ] = UNSET
    key: str
    attribute: str | None
    base: Any
    ours: Any
    theirs: Any
    redacted: Literal[True] | UnsetType = UNSET
    status: Literal["open", "resolved"]
    resolution: ConflictResolution | None
    resolved_by: str | None
    resolved_at: Timestamp | None
    resolutions: Annotated[
        list[Literal["ours", "theirs", "value"]],
        Meta(
            description="the resolutions this open Conflict takes (POST href); empty when it takes none "
            "(schema_migration: change the value on its branch, then merge again) or is resolved"
        ),
    ]
    href: str


class ConflictList(Answer, kw_only=True):
    """The Conflicts of a Proposal with its target."""

    proposal: str
    status: Literal["open", "merged", "closed"]
    conflicts: list[Conflict]


__all__ = ["Conflict", "ConflictList", "ProposalDoc", "ProposalList"]
