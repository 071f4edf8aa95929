"""The schema and the branches of a Domain."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Header, Path, Query, Request
from lorebase.contract.fields import (
    BodyKey,
    BranchRef,
    Cursor,
    Document,
    DomainName,
    HeadRef,
    IdempotencyKey,
    Name,
    NewBranchName,
    RevisionRef,
    bounded,
)
from lorebase.contract.policy import Need, Owner, P, Scope, Target, grant
from lorebase.contract.schemas import members

Approvals = Annotated[int, Meta(ge=0, le=10, description="Approvals a merge into the branch needs")]


class GetSchema(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""


class Backfill(Body, frozen=True, kw_only=True):
    """The value an Attribute takes on Records without one: a constant `value`, or an `expression`
    over the Record's values (the Derivation language without aggregates; names as the new schema
    spells them)."""

    value: Any = None
    expression: Annotated[str, bounded(2000, "An expression over the Record's own values")] | None = None


SchemaOp = Literal[
    "add_kind",
    "rename_kind",
    "change_kind",
    "remove_kind",
    "add_attribute",
    "rename_attribute",
    "remove_attribute",
    "change_attribute",
    "add_relation",
    "rename_relation",
    "remove_relation",
    "change_relation",
    "put_operation",
    "remove_operation",
    "put_lens",
    "remove_lens",
    "add_trait",
    "rename_trait",
    "change_trait",
    "remove_trait",
    "split_attribute",
    "merge_attributes",
]


class SchemaChangeItem(Body, frozen=True, kw_only=True):
    """One change of a change set (docs/schema.md, "Changing a schema" lists what each op takes)."""

    op: SchemaOp
    kind: Name | None = None
    attribute: Name | None = None
    relation: Name | None = None
    operation: Name | None = None
    lens: Name | None = None
    trait: Name | None = None
    to: Name | None = None
    inverse: Annotated[Name, Meta(description="rename_relation: the new inverse name")] | None = None
    definition: Document | None = None
    backfill: Backfill | None = None
    map: (
        Annotated[
            Document,
            Meta(
                description="Old values to new ones, applied before a conversion (change_relation: "
                "link Attribute -> old values to new ones)"
            ),
        ]
        | None
    ) = None
    delete_data: bool = False
    pattern: (
        Annotated[
            str,
            bounded(2000, "split_attribute: a regular expression with a named group per new Attribute"),
        ]
        | None
    ) = None
    into: (
        Annotated[Document, Meta(description="split_attribute: the new Attributes, name -> definition")]
        | None
    ) = None
    attributes: (
        Annotated[list[Name], Meta(max_length=50, description="merge_attributes: the Attributes merged")]
        | None
    ) = None


class SchemaChangeSet(Body, frozen=True, kw_only=True):
    """A change set: its changes in order, applied as one Revision with its data migration. A Record
    that would end invalid refuses the whole (422 naming it) unless `on_invalid` is `clear` (its
    invalid values that are not required are cleared)."""

    changes: Annotated[list[SchemaChangeItem], Meta(min_length=1, max_length=200)]
    message: Annotated[str, bounded(4096, "The Revision's message")] | None = None
    dry_run: bool = False
    expected_head: HeadRef | None = None
    idempotency_key: BodyKey | None = None
    on_invalid: Literal["refuse", "clear"] = "refuse"


Prefer = Annotated[
    str,
    bounded(
        1024,
        "RFC 7240 preferences: `respond-async` answers 202 with a job instead of waiting for the "
        "change set; with `wait=N` beside it the call first waits up to N seconds (at most "
        "keeper.schema_changes.job_wait_max_s) and answers the job's result itself when it ends by "
        "then (others are ignored)",
    ),
]
JobId = Annotated[str, Meta(min_length=1, max_length=64, pattern=r"^[^\x00]*$", description="A job id")]


class ChangeSchema(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Path]
    idempotency_key: Annotated[IdempotencyKey, Header("Idempotency-Key")] = ""
    prefer: Annotated[Prefer, Header("Prefer")] = ""
    body: SchemaChangeSet


class GetSchemaChange(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[JobId, Path]


class ListSchemaChanges(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[
        Annotated[str, Meta(max_length=255, pattern=r"^[^\x00]*$", description="Only this branch's jobs")],
        Query,
    ] = ""
    limit: Annotated[Annotated[int, Meta(ge=0, le=100, description="Page size; 0: 20")], Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class NewBranch(Body, frozen=True, kw_only=True):
    name: NewBranchName
    from_: Annotated[
        BranchRef | None, Meta(description="the branch to fork (default: the default branch)")
    ] = msgspec.field(name="from", default=None)
    mode: Literal["copy", "overlay"] | None = None
    protected: bool | None = None
    required_approvals: Approvals | None = None


class CreateBranch(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewBranch


class ListBranches(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]


class GetBranch(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Path]


@members(any_of=("protected", "required_approvals"))
class BranchUpdate(Body, frozen=True, kw_only=True):
    protected: bool | None = None
    required_approvals: Approvals | None = None


class UpdateBranch(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Path]
    body: BranchUpdate


BRANCH = DOMAIN + "/branches/{branch:path}"
SCHEMA_CHANGES = DOMAIN + "/schema/changes"

ENDPOINTS = [
    Endpoint(
        "get_schema",
        "GET",
        DOMAIN + "/schema",
        "keeper",
        "GetSchema",
        GetSchema,
        "The schema as the caller may read it (invisible Kinds left out)",
        "schema",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        etag=True,
        response=answers.schema.SchemaView,
    ),
    Endpoint(
        "change_schema",
        "POST",
        BRANCH + "/schema/changes",
        "keeper",
        "ChangeSchema",
        ChangeSchema,
        "Change the schema on a branch: a change set as one Revision, with its data migration",
        "schema",
        policy=grant(P.DATA_READ, P.SCHEMA_CHANGE, scope=Scope.EVERY_KIND),
        description="Adds, renames and removes Kinds, Attributes and Relations, changes types, enums, "
        "constraints and aliases, and sets Operations and lenses, in one Revision (origin `schema`, "
        "`schema_changed: true` on every feed) that migrates the data with it: renamed values keep "
        "their Records, history and lineage; backfills and conversions are written; a Record that "
        "would end invalid refuses the whole change set (422 naming it). `dry_run` answers what it "
        "would do. `expected_head` and an idempotency key work as for Operations (docs/schema.md). "
        "With `Prefer: respond-async` it answers 202 at once with a job (`Location`, "
        "`Preference-Applied: respond-async`) that `GET .../schema/changes/{id}` follows; a retry "
        "under the same idempotency key answers the same job. With `Prefer: respond-async, wait=N` "
        "it waits up to N seconds first: a job that ended by then is answered as the synchronous "
        "call answers (`Preference-Applied: wait=N`), else 202 (`Preference-Applied: "
        "respond-async, wait=N`).",
        problems=(409,),
        response=answers.schema.SchemaChange,
        other_answers=((202, answers.schema.SchemaChangeJob),),
        bulk=True,
        clears_cache=True,
    ),
    Endpoint(
        "get_schema_change",
        "GET",
        SCHEMA_CHANGES + "/{id}",
        "keeper",
        "GetSchemaChange",
        GetSchemaChange,
        "A schema change job: running, or what its change set answered",
        "schema",
        policy=grant(Need(P.DATA_READ, "schema_change"), scope=Scope.TARGET, target=Target.SCHEMA_CHANGE),
        description='A change set sent with `Prefer: respond-async` (docs/schema.md, "Large '
        'migrations"): `running` (with `progress`), then `committed` or `dry_run` with `result`, the '
        "answer the synchronous call gives, or `failed` with `problem`, the problem details it "
        "answers. A job on a branch the caller may not read answers 404 like an unknown one; a caller "
        "who does not read every value of the branch (narrowed to Kinds, or without a clearance) "
        "gets neither `result`, `progress` nor more of `problem` than its code.",
        problems=(404,),
        response=answers.schema.SchemaChangeJob,
    ),
    Endpoint(
        "list_schema_changes",
        "GET",
        SCHEMA_CHANGES,
        "keeper",
        "ListSchemaChanges",
        ListSchemaChanges,
        "The schema change jobs of a Domain, newest first",
        "schema",
        policy=grant(),
        description="Only jobs on branches the caller may read; `branch` keeps one branch's.",
        response=answers.schema.SchemaChangeJobList,
    ),
    Endpoint(
        "create_branch",
        "POST",
        DOMAIN + "/branches",
        "keeper",
        "CreateBranch",
        CreateBranch,
        "Create a branch (copy or overlay) from another",
        "branches",
        policy=grant(
            Need(P.BRANCH_CREATE, "body.name"),
            Need(P.DATA_READ, "body.from_"),
            Need(P.DOMAIN_SETTINGS, "body.name", when=("body.protected", "body.required_approvals")),
        ),
        success=201,
        problems=(409,),
        response=answers.schema.Branch,
        request_example=examples.bodies.BRANCH,
    ),
    Endpoint(
        "list_branches",
        "GET",
        DOMAIN + "/branches",
        "keeper",
        "ListBranches",
        ListBranches,
        "The branches of a Domain",
        "branches",
        policy=grant(),
        response=answers.schema.BranchList,
    ),
    Endpoint(
        "get_branch",
        "GET",
        BRANCH,
        "keeper",
        "GetBranch",
        GetBranch,
        "A branch and its head",
        "branches",
        policy=grant(P.DATA_READ),
        response=answers.schema.BranchView,
    ),
    Endpoint(
        "update_branch",
        "PATCH",
        BRANCH,
        "keeper",
        "UpdateBranch",
        UpdateBranch,
        "Protect a branch or set the approvals its merges need",
        "branches",
        policy=grant(P.DOMAIN_SETTINGS),
        response=answers.schema.BranchView,
    ),
    Endpoint(
        "delete_branch",
        "DELETE",
        BRANCH,
        "keeper",
        "DeleteBranch",
        GetBranch,
        "Delete a branch (its Revisions stay in the history)",
        "branches",
        policy=grant(
            P.DOMAIN_SETTINGS, target=Target.BRANCH, owner=Owner.CREATOR, owner_needs=(P.BRANCH_CREATE,)
        ),
        problems=(409,),
        response=answers.schema.DeletedBranch,
    ),
]
