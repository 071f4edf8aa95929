"""The schema and the branches of a Domain."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import BranchRef, DomainName, NewBranchName
from lorebase.contract.policy import Need, Owner, P, Scope, Target, grant
from lorebase.contract.schemas import members

Approvals = Annotated[int, Meta(ge=0, le=10, description="Approvals a merge into the branch needs")]


class GetSchema(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Query] = ""


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
