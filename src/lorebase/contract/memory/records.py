"""Memory records, their commands and reads, and memory grants: keeper's MemoryStore. The scopes
and the helper that declares a memory endpoint are shared with the journal's (journal.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase import names
from lorebase.contract import answers
from lorebase.contract._base import MEMORY, Body
from lorebase.contract.answers.memory import Capability
from lorebase.contract.endpoint import Endpoint, Header, Path, Request
from lorebase.contract.fields import (
    BodyKey,
    Cursor,
    IdempotencyKey,
    Name,
    Vector,
    bounded,
    grammar,
    written,
)
from lorebase.contract.policy import Policy, admin_only, memory
from lorebase.contract.schemas import members

LIMIT = "memory.max_body_bytes"
MAX_DERIVED_FROM = 64
BIGINT = 2**63 - 1  # what a PostgreSQL bigint holds

ScopeId = Annotated[str, grammar(names.MEMORY_SCOPE, "A memory scope id: " + names.MEMORY_SCOPE.hint)]
PageSize = Annotated[int, Meta(ge=1, le=256, description="1-256")]
Content = Annotated[
    Any,
    Meta(
        description="Any JSON value but null, at most memory.max_content_bytes (32 KiB) as canonical JSON",
        extra_json_schema={"not": {"type": "null"}},
    ),
]
ValidUntil = Annotated[
    int, Meta(ge=0, le=BIGINT, description="Milliseconds since 1970 from which the record is expired")
]
Revision = Annotated[int, Meta(ge=1, le=BIGINT, description="The record_revision you last read")]


class GrantedScope(Body, frozen=True, kw_only=True):
    """The exact scope a memory grant covers (both visibilities)."""

    project_id: ScopeId
    mission_id: ScopeId | None
    agent_id: ScopeId


class ScopeRef(GrantedScope, frozen=True, kw_only=True):
    """A scope a request names; the tenant and, for private visibility, the private subject come
    from the credential."""

    visibility: Literal["shared", "private"]


class _Command(Body, frozen=True, kw_only=True):
    """What every memory command carries: its idempotency key, here or in the Idempotency-Key
    header (the body wins); a command needs one of the two."""

    idempotency_key: BodyKey | None = None


@members(required=("idempotency_key",))
class NewMemory(_Command, frozen=True, kw_only=True):
    scope: ScopeRef
    content: Content
    valid_until_millis: ValidUntil | None = None


@members(required=("idempotency_key",))
class DerivedMemory(NewMemory, frozen=True, kw_only=True):
    derived_from: Annotated[
        list[Name],
        Meta(
            min_length=1,
            max_length=MAX_DERIVED_FROM,
            description=f"1-{MAX_DERIVED_FROM} distinct ids of active records you may read",
            extra_json_schema={"uniqueItems": True},
        ),
    ]


@members(
    any_of=("content", "valid_until_millis"), nullable=("valid_until_millis",), required=("idempotency_key",)
)
class MemoryUpdate(_Command, frozen=True, kw_only=True):
    """An update sets content, valid_until_millis (null: it never expires) or both."""

    record_revision: Revision
    content: Content = UNSET
    valid_until_millis: ValidUntil | None | UnsetType = UNSET


@members(required=("idempotency_key",))
class MemoryDeletion(_Command, frozen=True, kw_only=True):
    record_revision: Revision | None = None


@members(required=("idempotency_key",))
class EmbeddingBinding(_Command, frozen=True, kw_only=True):
    """An embedding bound to the record's current revision (which it does not bump)."""

    record_revision: Revision
    model: Annotated[str, bounded(200, "The embedding model that computed the vector", min_length=1)]
    vector: Vector


@members(required=("idempotency_key",))
class MemoryReviewCommand(_Command, frozen=True, kw_only=True):
    decision: Literal["approve", "reject", "request_changes"]
    reason: Annotated[str, written(2000, "Why: 1-2000 characters, not only whitespace")]
    record_revision: Revision | None = None


class MemoryQueryBody(Body, frozen=True, kw_only=True):
    scope: ScopeRef
    limit: PageSize = 100
    cursor: Cursor | None = None
    include_unavailable: bool = False


class MemoryGrantBody(Body, frozen=True, kw_only=True):
    principal: Annotated[Name, Meta(description="The principal's id")]
    scope: GrantedScope
    capabilities: Annotated[
        list[Capability], Meta(min_length=1, max_length=3, extra_json_schema={"uniqueItems": True})
    ]


class _Keyed(Request, frozen=True, kw_only=True):
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""


class _RecordKeyed(Request, frozen=True, kw_only=True):
    record_id: Annotated[Name, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""


class CreateMemory(_Keyed, frozen=True, kw_only=True):
    body: NewMemory


class DeriveMemory(_Keyed, frozen=True, kw_only=True):
    body: DerivedMemory


class UpdateMemory(_RecordKeyed, frozen=True, kw_only=True):
    body: MemoryUpdate


class DeleteMemory(_RecordKeyed, frozen=True, kw_only=True):
    body: MemoryDeletion


class AttachEmbedding(_RecordKeyed, frozen=True, kw_only=True):
    body: EmbeddingBinding


class ReviewMemory(_RecordKeyed, frozen=True, kw_only=True):
    body: MemoryReviewCommand


class RecordRead(Request, frozen=True, kw_only=True):
    record_id: Annotated[Name, Path]


class QueryMemory(Request, frozen=True, kw_only=True):
    body: MemoryQueryBody


class CreateMemoryGrant(Request, frozen=True, kw_only=True):
    body: MemoryGrantBody


class GrantCall(Request, frozen=True, kw_only=True):
    grant_id: Annotated[Name, Path]


def memory_endpoint(
    name: str,
    method: str,
    path: str,
    service: str,
    rpc: str,
    request: type[Request],
    summary: str,
    policy: Policy,
    **more: Any,
) -> Endpoint:
    """A memory endpoint: its body within memory.max_body_bytes, no-store answers, and 400 for a
    query parameter it does not declare or (unless it says otherwise) a body that does not fit."""
    more.setdefault("invalid_status", 400)
    return Endpoint(
        name,
        method,
        MEMORY + path,
        service,
        rpc,
        request,
        summary,
        "memory",
        policy=policy,
        body_limit=LIMIT,
        no_store=True,
        strict_query=True,
        **more,
    )


def _command(
    name: str, method: str, path: str, rpc: str, request: type[Request], summary: str, **more: Any
) -> Endpoint:
    """A memory command: 422 for a body that does not fit, 409 for a stale or deleted record."""
    more.setdefault("policy", memory("memory_write"))
    return memory_endpoint(
        name,
        method,
        path,
        "memory_store",
        rpc,
        request,
        summary,
        more.pop("policy"),
        invalid_status=422,
        problems=(409,),
        response=answers.memory.MemoryCommand,
        **more,
    )


ENDPOINTS = [
    _command(
        "create_memory",
        "POST",
        "/records",
        "CreateMemory",
        CreateMemory,
        "Create a memory record",
        success=201,
    ),
    _command(
        "derive_memory",
        "POST",
        "/derivations",
        "DeriveMemory",
        DeriveMemory,
        "Derive a memory record from others",
        success=201,
        policy=memory("memory_write", "memory_read"),
    ),
    _command(
        "update_memory",
        "PATCH",
        "/records/{record_id}",
        "UpdateMemory",
        UpdateMemory,
        "Update a memory record (record_revision checked)",
    ),
    _command(
        "delete_memory",
        "DELETE",
        "/records/{record_id}",
        "DeleteMemory",
        DeleteMemory,
        "Delete a memory record",
        body_optional=True,
    ),
    _command(
        "attach_memory_embedding",
        "PUT",
        "/records/{record_id}/embedding",
        "AttachMemoryEmbedding",
        AttachEmbedding,
        "Bind an embedding to a memory revision",
    ),
    _command(
        "review_memory",
        "POST",
        "/records/{record_id}/reviews",
        "ReviewMemory",
        ReviewMemory,
        "Record a review decision on a memory",
    ),
    memory_endpoint(
        "get_memory",
        "GET",
        "/records/{record_id}",
        "memory_store",
        "GetMemory",
        RecordRead,
        "One memory record",
        memory("memory_read"),
        response=answers.memory.MemoryRecord,
    ),
    memory_endpoint(
        "query_memory",
        "POST",
        "/query",
        "memory_store",
        "QueryMemory",
        QueryMemory,
        "Memory records of a scope",
        memory("memory_read"),
        writes=False,
        response=answers.memory.MemoryPage,
    ),
    memory_endpoint(
        "create_memory_grant",
        "POST",
        "/grants",
        "memory_store",
        "CreateMemoryGrant",
        CreateMemoryGrant,
        "Grant memory capabilities on a scope",
        admin_only(),
        success=201,
        invalid_status=422,
        response=answers.memory.NewMemoryGrant,
    ),
    memory_endpoint(
        "delete_memory_grant",
        "DELETE",
        "/grants/{grant_id}",
        "memory_store",
        "DeleteMemoryGrant",
        GrantCall,
        "Withdraw a memory grant",
        admin_only(),
        response=answers.memory.DeletedMemoryGrant,
    ),
]

__all__ = [
    "BIGINT",
    "ENDPOINTS",
    "LIMIT",
    "MAX_DERIVED_FROM",
    "DerivedMemory",
    "EmbeddingBinding",
    "GrantedScope",
    "MemoryDeletion",
    "MemoryGrantBody",
    "MemoryQueryBody",
    "MemoryUpdate",
    "NewMemory",
    "PageSize",
    "MemoryReviewCommand",
    "ScopeRef",
    "memory_endpoint",
]
