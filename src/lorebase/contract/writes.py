"""Writes: Operation executions, imports and source syncs, and embeddings."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, RECORD, Body
from lorebase.contract.endpoint import Endpoint, Header, Path, Request
from lorebase.contract.evidence import Evidence
from lorebase.contract.fields import (
    BodyKey,
    BranchRef,
    Document,
    DomainName,
    HeadRef,
    IdempotencyKey,
    Name,
    ShortText,
    Vector,
    bounded,
)
from lorebase.contract.policy import P, Scope, Target, grant

Message = Annotated[str, bounded(4096, "The Revision's message")]


class Execution(Body, frozen=True, kw_only=True):
    """An Operation execution. `auto_propose` and `auto_merge` left out (null) take the Domain's
    settings (keeper.agent_writes), so null and false differ there; `intent` and `auto_merge` go
    with a `task`."""

    parameters: Document = msgspec.field(default_factory=dict)
    dry_run: bool = False
    expected_head: HeadRef | None = None
    message: Message | None = None
    branch: BranchRef | None = None
    idempotency_key: BodyKey | None = None
    task: ShortText | None = None
    intent: Annotated[str, bounded(4000, "Why: a sentence or two for the Proposal")] | None = None
    auto_propose: bool | None = None
    auto_merge: bool | None = None
    # The evidence of every value the execution sets, when they were extracted (docs/provenance.md).
    extraction: Evidence | None = None


class ExecuteOperation(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    operation: Annotated[Name, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    body: Execution


class RecordItem(Body, frozen=True, kw_only=True):
    """A Record to load: its Kind and its values (the key among them). An extracted Record carries
    its evidence (docs/provenance.md): `extraction` for all its values, `evidence` per Attribute
    (which wins over `extraction` for that Attribute)."""

    kind: Name
    values: Document
    extraction: Evidence | None = None
    evidence: Annotated[dict[Name, Evidence], Meta(max_length=1000)] | None = None


class LinkItem(Body, frozen=True, kw_only=True):
    """A Link to load: its Relation, the keys of its ends and its values."""

    relation: Name
    from_: Name = msgspec.field(name="from")
    to: Name
    values: Document | None = None


class Load(Body, frozen=True, kw_only=True):
    records: Annotated[list[RecordItem], Meta(max_length=1_000_000)] | None = None
    links: Annotated[list[LinkItem], Meta(max_length=1_000_000)] | None = None
    message: Message | None = None
    branch: BranchRef | None = None
    expected_head: HeadRef | None = None
    idempotency_key: BodyKey | None = None


class ImportBatch(Load, frozen=True, kw_only=True):
    """An import. With `extraction` (the evidence of every Record that gives none of its own) or
    evidence on any Record, it is an extraction: its Revision's origin is `extraction`."""

    source: ShortText | None = None
    extraction: Evidence | None = None


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
    vector: Vector
    model: Annotated[str, bounded(200, "The embedding model that computed the vector", min_length=1)]
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
        policy=grant(P.DATA_READ, P.OPERATION_EXECUTE, scope=Scope.TARGET, target=Target.OPERATION),
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
        policy=grant(P.DOMAIN_SETTINGS, scope=Scope.READABLE),
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
        policy=grant(P.DOMAIN_SETTINGS, scope=Scope.READABLE),
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
        policy=grant(P.OPERATION_EXECUTE, scope=Scope.KIND, kind="kind"),
        response=answers.writes.EmbeddingSet,
    ),
]

__all__ = ["ENDPOINTS"]
