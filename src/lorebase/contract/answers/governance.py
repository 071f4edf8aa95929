"""What the reconciliation endpoints answer (keeper's governance/reconciliation.py and
governance/record_merge.py): candidates, their evidence, and what an accept did."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.answers.writes import TaskMerge, TaskProposal
from lorebase.contract.documents import (
    Answer,
    Approval,
    Attempt,
    Count,
    Cursor,
    Next,
    Ref,
    RevisionId,
    Timestamp,
    Values,
)


class MatchedRule(Answer, kw_only=True):
    """One rule that matched: `unique` (same value of a unique Attribute), `title` (same title) or
    `similar_title` (titles at least scribe.reconciliation.similarity similar by pg_trgm), with the
    two values compared (record_a's first; `***` and `redacted` where the caller lacks the clearance)."""

    rule: Literal["unique", "title", "similar_title"]
    attribute: str
    values: list[Any]
    similarity: Annotated[float, Meta(ge=0, le=1)] | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class CandidateRecord(Answer, kw_only=True):
    """One Record of the pair as the caller may read it now (`values` null: deleted since)."""

    ref: Ref
    key: str
    values: Values | None
    redacted: list[str] | UnsetType = UNSET


class CandidateDoc(Answer, kw_only=True):
    """A reconciliation candidate: two Records of one Kind likely to be the same thing."""

    id: str
    domain: str
    branch: str
    kind: str
    record_a: Ref
    record_b: Ref
    score: Annotated[float, Meta(ge=0, le=1)]
    evidence: list[MatchedRule]
    status: Literal["open", "accepted", "dismissed"]
    revision: RevisionId | None  # the head it was computed at
    stewards: list[str]
    created_at: Timestamp
    updated_at: Timestamp
    decided_by: str | None
    decided_at: Timestamp | None
    reason: str | None
    result: dict[str, Any] | None
    records: list[CandidateRecord] | UnsetType = UNSET


class CandidateList(Answer, kw_only=True):
    """Candidates in the order they were found (by id)."""

    domain: str
    candidates: list[CandidateDoc]
    next_cursor: Cursor


class CandidateDecided(Answer, kw_only=True):
    """A dismissed candidate."""

    domain: str
    candidate: CandidateDoc


class ValueConflict(Answer, kw_only=True):
    """An Attribute both Records held with different values: the survivor's was kept."""

    attribute: str
    kept: Any
    dropped: Any
    redacted: bool | UnsetType = UNSET


class DroppedLink(Answer, kw_only=True):
    """A Link of the removed Record not moved to the survivor, and why."""

    relation: str
    link: str
    reason: str


class CandidateAccepted(Answer, kw_only=True):
    """An accepted candidate: the Records merged on the branch (`merged`, 200), or a task branch and
    its Proposal waiting for review (`proposed` or `conflicts`, 202)."""

    status: Literal["merged", "proposed", "conflicts"]
    domain: str
    candidate: CandidateDoc
    kept: Ref
    removed: Ref
    branch: str  # where the merge Revision was committed (the task branch for a Proposal)
    target: str
    invocation_id: str
    revision: RevisionId | None
    filled: list[str]
    conflicts: list[ValueConflict]
    moved_links: Count
    dropped_links: list[DroppedLink]
    proposal: TaskProposal | UnsetType = UNSET
    approval: Approval | UnsetType = UNSET
    attempt: Attempt | None | UnsetType = UNSET
    merge: TaskMerge | UnsetType = UNSET
    branch_created: bool | UnsetType = UNSET
    next: list[Next]


class Scanned(Answer, kw_only=True):
    """A scan of the default branch: the open candidates after it and those no longer found."""

    domain: str
    branch: str
    revision: RevisionId | None
    scanned: bool
    candidates: Count
    dropped: Count


__all__ = [
    "CandidateAccepted",
    "CandidateDecided",
    "CandidateDoc",
    "CandidateList",
    "CandidateRecord",
    "DroppedLink",
    "MatchedRule",
    "Scanned",
    "ValueConflict",
]
