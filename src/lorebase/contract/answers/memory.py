"""What the agent memory endpoints answer (docs/memory.md): memory records and commands, queries
and grants (keeper's memory/), the change journal and consumer checkpoints (feed's
memory_changes.py and memory_checkpoints.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import Answer, Count, Timestamp

Millis = Annotated[int, Meta(description="Unix time in milliseconds")]
Sequence = Annotated[int, Meta(ge=0, description="An unsigned 64-bit journal sequence")]
Capability = Literal["memory_read", "memory_write", "memory_checkpoint"]


class MemoryScope(Answer, kw_only=True):
    """A scope: project, mission (or null), agent, visibility; tenant and private subject come from
    the credential."""

    project_id: str
    mission_id: str | None
    agent_id: str
    visibility: Literal["shared", "private"]


class GrantScope(Answer, kw_only=True):
    """The exact scope a memory grant covers (both visibilities)."""

    project_id: str
    mission_id: str | None
    agent_id: str


class MemoryEmbedding(Answer, kw_only=True):
    """The embedding bound to a memory revision (the vector is never returned)."""

    model: str
    dimensions: Annotated[int, Meta(ge=1)]
    record_revision: Count
    digest: str


class MemoryReview(Answer, kw_only=True):
    """The latest review decision on a memory."""

    decision: Literal["approve", "reject", "request_changes"]
    reason: str
    reviewer: str
    record_revision: Count
    reviewed_at_millis: Millis


class MemoryRecord(Answer, kw_only=True):
    """A memory record; `content` (and its digest) is null unless it is active."""

    record_id: str
    scope: MemoryScope
    record_revision: Annotated[int, Meta(ge=1)]
    status: Literal["active", "deleted", "expired"]
    content: Any
    content_digest: str | None
    derived_from: list[str]
    valid_until_millis: Millis | None
    embedding: MemoryEmbedding | None
    review: MemoryReview | None
    created_by: str
    created_at_millis: Millis
    updated_by: str
    updated_at_millis: Millis


class JournalCursor(Answer, kw_only=True):
    """A position in a journal; version 2 cursors carry the hash chain up to it. Pass it back as
    returned."""

    journal_id: str
    sequence: Sequence
    prefix_digest: str | UnsetType = UNSET


class MemoryChange(Answer, kw_only=True):
    """The journal entry a command made."""

    kind: Literal["created", "derived", "updated", "deleted", "embedding_attached", "reviewed"]
    cursor: JournalCursor


class MemoryCommand(Answer, kw_only=True):
    """An accepted command: the record after it and its journal entry (null when nothing changed,
    as for an identical embedding). A retry under the same key answers the original receipt with
    `"replayed": true`."""

    command: Literal["create", "derive", "update", "delete", "attach_embedding", "review"]
    idempotency_key: str
    record: MemoryRecord
    change: MemoryChange | None
    replayed: Literal[True] | UnsetType = UNSET


class MemoryPage(Answer, kw_only=True):
    """Records of the caller's namespace of the scope, in creation order."""

    scope: MemoryScope
    records: list[MemoryRecord]
    next_cursor: str | None


class MemoryGrant(Answer, kw_only=True):
    """Memory capabilities of a principal on an exact scope, in its tenant."""

    id: str
    principal: str
    tenant: str
    scope: GrantScope
    capabilities: list[Capability]


class NewMemoryGrant(MemoryGrant, kw_only=True):
    """A memory grant just made."""

    created_at: Timestamp


class DeletedMemoryGrant(MemoryGrant, kw_only=True):
    """A memory grant withdrawn."""

    deleted_at: Timestamp


class JournalEntry(Answer, kw_only=True):
    """A committed memory mutation (no content: refetch the record)."""

    schema_version: int
    cursor: JournalCursor
    kind: Literal["created", "derived", "updated", "deleted", "embedding_attached", "reviewed"]
    record_id: str
    record_revision: Count
    author: str
    committed_at_millis: Millis
    change_digest: str


class ChangePage(Answer, kw_only=True):
    """A page of a scope's journal after `after`, up to the fence `high_watermark` (null: nothing was
    ever written in the namespace); `complete` when the page reached the fence."""

    contract_version: Literal[1, 2]
    journal_id: str | None
    entries: list[JournalEntry]
    high_watermark: JournalCursor | None
    next_cursor: JournalCursor | None
    complete: bool


class Checkpoint(Answer, kw_only=True):
    """A consumer's saved cursor (the caller's own), with its revision for the next save."""

    consumer: str
    scope: MemoryScope
    contract_version: Literal[1, 2]
    cursor: JournalCursor
    revision: Annotated[int, Meta(ge=1)]
    updated_at: Timestamp


class CheckpointList(Answer, kw_only=True):
    """The caller's checkpoints by consumer name; pass `next_after` back as `after`."""

    checkpoints: list[Checkpoint]
    next_after: str | None


class DeletedCheckpoint(Answer, kw_only=True):
    """A deleted checkpoint: the name starts over at revision 0."""

    consumer: str
    deleted: Literal[True]
    revision: int


__all__ = [
    "ChangePage",
    "Checkpoint",
    "CheckpointList",
    "DeletedCheckpoint",
    "DeletedMemoryGrant",
    "MemoryCommand",
    "MemoryPage",
    "MemoryRecord",
    "NewMemoryGrant",
]
