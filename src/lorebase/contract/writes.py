"""Writes: Operation executions, imports and source syncs, and embeddings."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, RECORD, Body
from lorebase.contract.endpoint import Endpoint, Header, Path, Request
from lorebase.contract.fields import (
    BranchRef,
    Document,
    DomainName,
    IdempotencyKey,
    Name,
    RevisionRef,
    ShortText,
    Text,
    bounded,
)

Message = Annotated[str, bounded(4096, "The Revision's message")]


class Execution(Body, frozen=True, kw_only=True):
    parameters: Document | None = None
    dry_run: bool | None = None
    expected_head: RevisionRef | None = None
    message: Message | None = None
    branch: BranchRef | None = None
    idempotency_key: IdempotencyKey | None = None
    task: ShortText | None = None
    intent: Text | None = None
    auto_propose: bool | None = None
    auto_merge: bool | None = None


class ExecuteOperation(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    operation: Annotated[Name, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: Execution


Items = Annotated[list[Document], Meta(max_length=1_000_000)]


class Load(Body, frozen=True, kw_only=True):
    records: Items | None = None
    links: Items | None = None
    message: Message | None = None
    branch: BranchRef | None = None
    expected_head: RevisionRef | None = None
    idempotency_key: IdempotencyKey | None = None


class ImportBatch(Load, frozen=True, kw_only=True):
    source: ShortText | None = None


class Import(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: ImportBatch


class SyncBatch(Load, frozen=True, kw_only=True):
    mode: Literal["full", "incremental"] | None = None


class SyncSource(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    source: Annotated[Name, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: SyncBatch


class Embedding(Body, frozen=True, kw_only=True):
    vector: Annotated[list[float], Meta(max_length=16384)]
    model: ShortText | None = None
    branch: BranchRef | None = None


class SetEmbedding(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    key: Annotated[Name, Path]
    body: Embedding


IMPORT_LIMIT = "http.max_import_body_bytes"

ENDPOINTS = [
    Endpoint(
        "execute_operation",
        "POST",
        DOMAIN + "/operations/{operation}/execute",
        "keeper",
        "ExecuteOperation",
        ExecuteOperation,
        "Execute an Operation: dry run, idempotency key, expected head, task writes",
        "writes",
        permission="operation.execute (or the Operation's own) and data.read on the branch",
        problems=(409,),
        response=answers.writes.Execution,
        other_answers=((202, answers.writes.Accepted),),
        request_example=examples.bodies.EXECUTE,
    ),
    Endpoint(
        "import_data",
        "POST",
        DOMAIN + "/imports",
        "keeper",
        "Import",
        Import,
        "Load Records and Links in one Revision (origin import)",
        "writes",
        permission="domain.settings",
        problems=(409, 413),
        body_limit=IMPORT_LIMIT,
        bulk=True,
        response=answers.writes.Imported,
    ),
    Endpoint(
        "sync_source",
        "POST",
        DOMAIN + "/sources/{source}/sync",
        "keeper",
        "SyncSource",
        SyncSource,
        "Load a Source's Records and Links (full or incremental)",
        "writes",
        permission="domain.settings",
        problems=(409, 413),
        body_limit=IMPORT_LIMIT,
        bulk=True,
        response=answers.writes.Synced,
    ),
    Endpoint(
        "set_embedding",
        "PUT",
        RECORD + "/embedding",
        "keeper",
        "SetEmbedding",
        SetEmbedding,
        "Attach an embedding to a Record",
        "writes",
        permission="operation.execute",
        response=answers.writes.EmbeddingSet,
    ),
]

__all__ = ["ENDPOINTS"]
