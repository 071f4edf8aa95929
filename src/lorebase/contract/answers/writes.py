"""What the writes answer: Operation executions (a dry run, a commit, or an agent task write that
opened a Proposal), imports and source syncs, embeddings, and the governance suggestions (keeper's
operations/, imports/, reads/embeddings.py, governance/suggestions.py).

An execution's answer says which it is in `status`: `dry_run`, `committed`, or for a task write
`proposed` or `conflicts` (202) or `merged` (200). A retry under the same idempotency key answers
the original document with `"replayed": true` (and `Idempotent-Replayed: true`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import (
    Answer,
    Approval,
    Attempt,
    Change,
    Count,
    Edit,
    Issue,
    Next,
    RevisionId,
    Timestamp,
)


class ReviewNote(Answer, kw_only=True):
    """A dry run of a write that will need review: why, and the calls that take the real execution
    forward (the `reason` and `next` of the 409 review-required it would get)."""

    required: Literal[True]
    reason: Literal["protected-branch", "review-policy"]
    detail: str
    next: list[Next]


class DryRun(Answer, tag_field="status", tag="dry_run", kw_only=True):
    """What the execution would do, stored nowhere: its edits, the changes they make and the
    violations they break (`valid` is false when there are any; they do not fail the request). A
    task write's dry run also names the task branch and its target."""

    dry_run: Literal[True]
    operation: str
    branch: str
    head: RevisionId | None
    valid: bool
    edits: list[Edit]
    violations: list[Issue]
    changes: list[Change]
    edit_count: Count
    revision: None
    task_branch: str | UnsetType = UNSET
    target: str | UnsetType = UNSET
    review: ReviewNote | UnsetType = UNSET


class Committed(Answer, tag_field="status", tag="committed", kw_only=True):
    """A committed execution: the new Revision and head, and the Records and Links it changed. With
    nothing to change it commits no Revision (`revision` null, `revisions` and `changes` empty)."""

    operation: str
    branch: str
    invocation_id: str
    revision: RevisionId | None
    revisions: list[RevisionId]
    head: RevisionId | None
    edit_count: Count
    changes: list[Change]
    replayed: bool


class TaskProposal(Answer, kw_only=True):
    """The Proposal of the task branch (`created`: by this execution)."""

    id: str
    title: str
    status: Literal["open", "merged", "closed"]
    source_ref: str
    target_ref: str
    url: str
    created: bool


class TaskMerge(Answer, kw_only=True):
    """Whether a merge was asked for, is allowed to the caller, was performed, and what blocks it."""

    requested: bool
    allowed: bool
    performed: bool
    blockers: list[str]


class _TaskWrite(Answer, tag_field="status", kw_only=True):
    operation: str
    branch: Annotated[str, Meta(description="The task branch the Operation ran on")]
    target: str
    invocation_id: str
    revision: RevisionId | None
    revisions: list[RevisionId]
    edit_count: Count
    replayed: bool
    proposal: TaskProposal
    approval: Approval
    attempt: Attempt | None
    merge: TaskMerge
    merged_revision: RevisionId | None
    branch_created: bool
    branch_deleted: bool
    warnings: list[str]
    next: list[Next]


class ProposedWrite(_TaskWrite, tag="proposed", kw_only=True):
    """An execution that needs review ran on its task branch; its Proposal waits (202)."""


class ConflictingWrite(_TaskWrite, tag="conflicts", kw_only=True):
    """An execution on its task branch whose Proposal has Conflicts with the target (202)."""


class MergedWrite(_TaskWrite, tag="merged", kw_only=True):
    """An execution on its task branch whose Proposal merged at once (200)."""


Execution = DryRun | Committed | ProposedWrite | ConflictingWrite | MergedWrite
Accepted = ProposedWrite | ConflictingWrite  # the 202 of a task write


class Counts(Answer, kw_only=True):
    """Records and Links."""

    records: Count
    links: Count


class Imported(Answer, kw_only=True):
    """A committed import: the Revision it made (null when nothing changed), what it received and
    what it changed."""

    status: Literal["committed"]
    branch: str
    source: str
    revision: RevisionId | None
    head: RevisionId | None
    received: Counts
    changed: Counts
    replayed: bool


class Synced(Imported, kw_only=True):
    """A recorded source sync: the import answer, its sync number and mode."""

    sync: Annotated[int, Meta(ge=1)]
    mode: Literal["full", "incremental"]


class EmbeddingSet(Answer, kw_only=True):
    """An embedding stored for a Record at the head it names (no Revision is committed)."""

    domain: str
    branch: str
    ref: str
    model: str
    dimensions: Annotated[int, Meta(ge=1)]
    revision: RevisionId | None
    updated_at: Timestamp


class SuggestionTarget(Answer, kw_only=True):
    """What a suggestion is about: a Kind, one of its Attributes, a stored value (none: the Domain)."""

    kind: str | UnsetType = UNSET
    attribute: str | UnsetType = UNSET
    value: str | UnsetType = UNSET


class SchemaPatch(Answer, kw_only=True):
    """The schema change a person applies on accepting: a dotted path into the schema document."""

    op: Literal["add", "describe"]
    path: str
    value: str


class Suggestion(Answer, kw_only=True):
    """An alias, value alias or description suggestion made from frequent resolve misses."""

    id: str
    phrase: str
    type: Literal["alias", "value_alias", "description"]
    target: SuggestionTarget
    patch: SchemaPatch
    score: float
    misses: Count
    status: Literal["open", "accepted", "dismissed"]
    created_at: Timestamp
    updated_at: Timestamp
    decided_by: str | None
    decided_at: Timestamp | None


class SuggestionList(Answer, kw_only=True):
    """Suggestions, most missed first."""

    domain: str
    suggestions: list[Suggestion]


class Decided(Answer, kw_only=True):
    """A decided suggestion; accepting adds the schema patch to apply (nothing changes the schema
    until a person applies it)."""

    domain: str
    suggestion: Suggestion
    schema_patch: SchemaPatch | UnsetType = UNSET
    note: str | UnsetType = UNSET


__all__ = [
    "Accepted",
    "Committed",
    "ConflictingWrite",
    "Decided",
    "DryRun",
    "EmbeddingSet",
    "Execution",
    "Imported",
    "MergedWrite",
    "ProposedWrite",
    "SuggestionList",
    "Synced",
]
