"""Agent memory (docs/memory.md): commands and reads go to keeper's MemoryStore, the change journal
and consumer checkpoints to feed's MemoryJournal. Bodies are limited to memory.max_body_bytes,
every answer carries Cache-Control: no-store, and a malformed request answers 400 (the seed's
memory change feed says so)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import MEMORY
from lorebase.contract.endpoint import Endpoint, Header, Path, Query, Request
from lorebase.contract.fields import Document, IdempotencyKey, Name

LIMIT = "memory.max_body_bytes"
ConsumerName = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[^\x00]*$")]


class Command(Request, frozen=True, kw_only=True):
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: Document


class RecordCommand(Request, frozen=True, kw_only=True):
    record_id: Annotated[Name, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: Document


class RecordRead(Request, frozen=True, kw_only=True):
    record_id: Annotated[Name, Path]


class MemoryDocument(Request, frozen=True, kw_only=True):
    body: Document


class GrantCall(Request, frozen=True, kw_only=True):
    grant_id: Annotated[Name, Path]


class Checkpoint(Request, frozen=True, kw_only=True):
    consumer: Annotated[ConsumerName, Path]
    body: Document


class CheckpointRead(Request, frozen=True, kw_only=True):
    consumer: Annotated[ConsumerName, Path]


class ListCheckpoints(Request, frozen=True, kw_only=True):
    after: Annotated[Annotated[str, Meta(max_length=128, pattern=r"^[^\x00]*$")], Query] = ""
    limit: Annotated[Annotated[int, Meta(ge=1, le=256)], Query] = 100


def _memory(
    name: str,
    method: str,
    path: str,
    service: str,
    rpc: str,
    request: type[Request],
    summary: str,
    permission: str,
    **more: object,
) -> Endpoint:
    return Endpoint(
        name,
        method,
        MEMORY + path,
        service,
        rpc,
        request,
        summary,
        "memory",
        permission=permission,
        body_limit=LIMIT,
        no_store=True,
        invalid_status=400,
        strict_query=True,
        **more,  # type: ignore[arg-type]
    )


ENDPOINTS = [
    _memory(
        "create_memory",
        "POST",
        "/records",
        "memory_store",
        "CreateMemory",
        Command,
        "Create a memory record",
        "memory_write",
        success=201,
        problems=(409,),
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "derive_memory",
        "POST",
        "/derivations",
        "memory_store",
        "DeriveMemory",
        Command,
        "Derive a memory record from others",
        "memory_write, memory_read on the sources",
        success=201,
        problems=(409,),
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "update_memory",
        "PATCH",
        "/records/{record_id}",
        "memory_store",
        "UpdateMemory",
        RecordCommand,
        "Update a memory record (record_revision checked)",
        "memory_write",
        problems=(409,),
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "delete_memory",
        "DELETE",
        "/records/{record_id}",
        "memory_store",
        "DeleteMemory",
        RecordCommand,
        "Delete a memory record",
        "memory_write",
        problems=(409,),
        body_optional=True,
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "attach_memory_embedding",
        "PUT",
        "/records/{record_id}/embedding",
        "memory_store",
        "AttachMemoryEmbedding",
        RecordCommand,
        "Bind an embedding to a memory revision",
        "memory_write",
        problems=(409,),
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "review_memory",
        "POST",
        "/records/{record_id}/reviews",
        "memory_store",
        "ReviewMemory",
        RecordCommand,
        "Record a review decision on a memory",
        "memory_write",
        problems=(409,),
        response=answers.memory.MemoryCommand,
    ),
    _memory(
        "get_memory",
        "GET",
        "/records/{record_id}",
        "memory_store",
        "GetMemory",
        RecordRead,
        "One memory record",
        "memory_read",
        response=answers.memory.MemoryRecord,
    ),
    _memory(
        "query_memory",
        "POST",
        "/query",
        "memory_store",
        "QueryMemory",
        MemoryDocument,
        "Memory records of a scope",
        "memory_read",
        response=answers.memory.MemoryPage,
    ),
    _memory(
        "create_memory_grant",
        "POST",
        "/grants",
        "memory_store",
        "CreateMemoryGrant",
        MemoryDocument,
        "Grant memory capabilities on a scope",
        "the admin principal",
        success=201,
        response=answers.memory.NewMemoryGrant,
    ),
    _memory(
        "delete_memory_grant",
        "DELETE",
        "/grants/{grant_id}",
        "memory_store",
        "DeleteMemoryGrant",
        GrantCall,
        "Withdraw a memory grant",
        "the admin principal",
        response=answers.memory.DeletedMemoryGrant,
    ),
    _memory(
        "read_memory_changes",
        "POST",
        "/changes",
        "memory_journal",
        "ReadMemoryChanges",
        MemoryDocument,
        "A page of the memory change journal of a scope",
        "memory_read",
        problems=(409,),
        response=answers.memory.ChangePage,
        request_example=examples.bodies.MEMORY_CHANGES,
    ),
    _memory(
        "save_memory_checkpoint",
        "PUT",
        "/checkpoints/{consumer}",
        "memory_journal",
        "SaveMemoryCheckpoint",
        Checkpoint,
        "Save a consumer's cursor (monotonic, revision-checked)",
        "memory_read, memory_checkpoint",
        problems=(409,),
        response=answers.memory.Checkpoint,
    ),
    _memory(
        "get_memory_checkpoint",
        "GET",
        "/checkpoints/{consumer}",
        "memory_journal",
        "GetMemoryCheckpoint",
        CheckpointRead,
        "A consumer's saved cursor",
        "memory_read",
        response=answers.memory.Checkpoint,
    ),
    _memory(
        "list_memory_checkpoints",
        "GET",
        "/checkpoints",
        "memory_journal",
        "ListMemoryCheckpoints",
        ListCheckpoints,
        "The caller's checkpoints",
        "memory_read, memory_checkpoint",
        response=answers.memory.CheckpointList,
    ),
    _memory(
        "delete_memory_checkpoint",
        "DELETE",
        "/checkpoints/{consumer}",
        "memory_journal",
        "DeleteMemoryCheckpoint",
        Checkpoint,
        "Delete a consumer's checkpoint",
        "memory_read, memory_checkpoint",
        problems=(409,),
        body_optional=True,
        response=answers.memory.DeletedCheckpoint,
    ),
]
