"""The memory change journal and consumer checkpoints (docs/memory.md, the seed's memory change
feed), feed's MemoryJournal: a page of a scope's journal between two cursors, and a subject's
saved cursors.

The seed fixes the statuses: malformed bounds (a cursor of the wrong shape, `limit` outside
1-256, a `contract_version` other than 1 or 2) are 400, like every body of these endpoints that
does not fit its model; a cursor of another namespace or ahead of the journal is 409 (feed decides
that, as it does the rules across members: a version 2 cursor needs its `prefix_digest`, and
`after` is not beyond `through`).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase import names
from lorebase.contract import answers, examples
from lorebase.contract._base import Body
from lorebase.contract.endpoint import Path, Query, Request
from lorebase.contract.fields import grammar, matching
from lorebase.contract.memory.records import BIGINT, PageSize, ScopeRef, memory_endpoint
from lorebase.contract.policy import memory
from lorebase.memory.journal import MAX_SEQUENCE

ConsumerName = Annotated[str, grammar(names.CHECKPOINT, "A consumer name: " + names.CHECKPOINT.hint)]
# A consumer name to page after, or none (the parameter left out or empty: from the start).
AfterConsumer = Annotated[
    str, grammar(names.CHECKPOINT, "A consumer name to list after: " + names.CHECKPOINT.hint, empty=True)
]
JournalId = Annotated[str, matching(r"jrn_[A-Za-z0-9]{8,64}", "The journal_id of a cursor a page returned")]
Sequence = Annotated[
    int, Meta(ge=0, description="An unsigned 64-bit sequence", extra_json_schema={"maximum": MAX_SEQUENCE})
]
SequenceText = Annotated[str, matching(r"[0-9]{1,20}", "An unsigned 64-bit sequence in decimal")]
PrefixDigest = Annotated[
    str, matching(r"[0-9a-f]{64}", "The hash chain up to the cursor's sequence (contract_version 2)")
]
ContractVersion = Annotated[Literal[1, 2], Meta(description="1: sequence-only cursors; 2: prefix-anchored")]


class JournalPosition(Body, frozen=True, kw_only=True):
    """A cursor as a page returned it: a journal and a sequence in it (a JSON integer, or its
    decimal string) and, in contract_version 2, the hash chain up to it."""

    journal_id: JournalId
    sequence: Sequence | SequenceText
    prefix_digest: PrefixDigest | None = None

    def __post_init__(self) -> None:
        if int(self.sequence) > MAX_SEQUENCE:
            raise ValueError("sequence is an unsigned 64-bit integer")


class ChangesQuery(Body, frozen=True, kw_only=True):
    """`after` (exclusive; null: the start), `through` (the inclusive fence; null: the newest entry)."""

    after: JournalPosition | None = None
    through: JournalPosition | None = None
    limit: PageSize = 100


class ChangesBody(Body, frozen=True, kw_only=True):
    contract_version: ContractVersion
    scope: ScopeRef
    query: ChangesQuery = msgspec.field(default_factory=ChangesQuery)


class CheckpointSave(Body, frozen=True, kw_only=True):
    contract_version: ContractVersion
    scope: ScopeRef
    cursor: JournalPosition
    revision: Annotated[
        int, Meta(ge=0, le=BIGINT, description="The checkpoint revision you last read; 0 to create it")
    ]


class CheckpointDeletion(Body, frozen=True, kw_only=True):
    revision: Annotated[int, Meta(ge=1, le=BIGINT, description="Delete only at this revision")] | None = None


class ReadChanges(Request, frozen=True, kw_only=True):
    body: ChangesBody


class SaveCheckpoint(Request, frozen=True, kw_only=True):
    consumer: Annotated[ConsumerName, Path]
    body: CheckpointSave


class DeleteCheckpoint(Request, frozen=True, kw_only=True):
    consumer: Annotated[ConsumerName, Path]
    body: CheckpointDeletion


class CheckpointRead(Request, frozen=True, kw_only=True):
    consumer: Annotated[ConsumerName, Path]


class ListCheckpoints(Request, frozen=True, kw_only=True):
    after: Annotated[AfterConsumer, Query] = ""
    limit: Annotated[PageSize, Query] = 100


ENDPOINTS = [
    memory_endpoint(
        "read_memory_changes",
        "POST",
        "/changes",
        "memory_journal",
        "ReadMemoryChanges",
        ReadChanges,
        "A page of the memory change journal of a scope",
        memory("memory_read"),
        writes=False,
        problems=(409,),
        response=answers.memory.ChangePage,
        request_example=examples.bodies.MEMORY_CHANGES,
    ),
    memory_endpoint(
        "save_memory_checkpoint",
        "PUT",
        "/checkpoints/{consumer}",
        "memory_journal",
        "SaveMemoryCheckpoint",
        SaveCheckpoint,
        "Save a consumer's cursor (monotonic, revision-checked)",
        memory("memory_read", "memory_checkpoint"),
        problems=(409,),
        response=answers.memory.Checkpoint,
    ),
    memory_endpoint(
        "get_memory_checkpoint",
        "GET",
        "/checkpoints/{consumer}",
        "memory_journal",
        "GetMemoryCheckpoint",
        CheckpointRead,
        "A consumer's saved cursor",
        memory("memory_read"),
        response=answers.memory.Checkpoint,
    ),
    memory_endpoint(
        "list_memory_checkpoints",
        "GET",
        "/checkpoints",
        "memory_journal",
        "ListMemoryCheckpoints",
        ListCheckpoints,
        "The caller's checkpoints",
        memory("memory_read", "memory_checkpoint"),
        response=answers.memory.CheckpointList,
    ),
    memory_endpoint(
        "delete_memory_checkpoint",
        "DELETE",
        "/checkpoints/{consumer}",
        "memory_journal",
        "DeleteMemoryCheckpoint",
        DeleteCheckpoint,
        "Delete a consumer's checkpoint",
        memory("memory_read", "memory_checkpoint"),
        problems=(409,),
        body_optional=True,
        response=answers.memory.DeletedCheckpoint,
    ),
]

__all__ = [
    "ENDPOINTS",
    "ChangesBody",
    "ChangesQuery",
    "CheckpointDeletion",
    "CheckpointSave",
    "JournalPosition",
]
