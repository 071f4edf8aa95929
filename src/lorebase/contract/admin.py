"""Administration: principals and their keys, Domains, grants, and the agent trace's sessions."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase import names
from lorebase.contract import answers
from lorebase.contract._base import API, DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import (
    BranchRef,
    Cursor,
    Document,
    DomainName,
    Name,
    NewDomainName,
    OptionalName,
    PrincipalId,
    SessionId,
    bounded,
    grammar,
    written,
)
from lorebase.contract.policy import Delegation, Need, P, Target, admin_only, caller, grant

Role = Literal["viewer", "editor", "reviewer", "admin"]
BranchPattern = Annotated[str, bounded(255, "A branch name or pattern (agent/*)")]


class NewPrincipal(Body, frozen=True, kw_only=True):
    id: PrincipalId
    type: Literal["service", "user"]
    name: Annotated[str, bounded(200, "A display name; empty: the id")] = ""
    tenant: Annotated[str, grammar(names.TENANT, "A tenant; empty: none", empty=True)] = ""


class CreatePrincipal(Request, frozen=True, kw_only=True):
    body: NewPrincipal


class CreateKey(Request, frozen=True, kw_only=True):
    principal: Annotated[Name, Path]


class RevokeKey(Request, frozen=True, kw_only=True):
    principal: Annotated[Name, Path]
    key_id: Annotated[Name, Path]


class NewDomain(Body, frozen=True, kw_only=True):
    name: NewDomainName
    schema: Annotated[Document, Meta(description="The schema document (docs/schema.md)")]
    settings: Document | None = None
    default_branch: BranchRef | None = None


class CreateDomain(Request, frozen=True, kw_only=True):
    body: NewDomain


class ListDomains(Request, frozen=True, kw_only=True):
    pass


class GetDomain(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]


class NewGrant(Body, frozen=True, kw_only=True):
    principal: Name
    role: Role
    branches: Annotated[list[BranchPattern], Meta(min_length=1, max_length=100)] = msgspec.field(
        default_factory=lambda: ["*"]
    )
    kinds: Annotated[list[Name], Meta(min_length=1, max_length=1000)] | None = None


class CreateGrant(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewGrant


class DeleteGrant(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    grant_id: Annotated[Name, Path]


class Note(Body, frozen=True, kw_only=True):
    text: Annotated[str, written(8000, "The note: not only whitespace")]
    domain: DomainName | None = None


class AddSessionNote(Request, frozen=True, kw_only=True):
    session: Annotated[SessionId, Path]
    body: Note


class GetSession(Request, frozen=True, kw_only=True):
    session: Annotated[SessionId, Path]


class ListSessions(Request, frozen=True, kw_only=True):
    domain: Annotated[OptionalName, Query] = ""
    principal: Annotated[OptionalName, Query] = ""
    limit: Annotated[Annotated[int, Meta(ge=0, le=200)], Query] = 0
    before: Annotated[Cursor, Query] = ""
    proposal: Annotated[OptionalName, Query] = ""


ENDPOINTS = [
    Endpoint(
        "create_principal",
        "POST",
        API + "/principals",
        "keeper",
        "CreatePrincipal",
        CreatePrincipal,
        "Create a principal (a user or a service)",
        "admin",
        policy=admin_only(),
        success=201,
        problems=(409,),
        response=answers.admin.Principal,
    ),
    Endpoint(
        "create_key",
        "POST",
        API + "/principals/{principal}/keys",
        "keeper",
        "CreateKey",
        CreateKey,
        "Create a key for a principal (shown once)",
        "admin",
        policy=admin_only(),
        success=201,
        body_optional=True,
        response=answers.admin.NewKey,
    ),
    Endpoint(
        "revoke_key",
        "DELETE",
        API + "/principals/{principal}/keys/{key_id}",
        "keeper",
        "RevokeKey",
        RevokeKey,
        "Revoke a key",
        "admin",
        policy=admin_only(),
        clears_cache=True,
        response=answers.admin.RevokedKey,
    ),
    Endpoint(
        "add_session_note",
        "POST",
        API + "/sessions/{session}/notes",
        "keeper",
        "AddSessionNote",
        AddSessionNote,
        "Attach a note to an agent session",
        "trace",
        policy=caller(),
        success=201,
        response=answers.admin.NewSessionNote,
    ),
    Endpoint(
        "list_sessions",
        "GET",
        API + "/sessions",
        "keeper",
        "ListSessions",
        ListSessions,
        "Agent sessions, the latest active first",
        "trace",
        policy=caller(),
        description="Each session with its principal, the Domains its entries name, when it started "
        "and was last active, its steps, the steps that failed (status 400 or above) and its notes. "
        "`domain` keeps the sessions with an entry in that Domain, `principal` those of that "
        "principal, `proposal` those with a step that opened or added to that Proposal; `limit` (default 50, at most 200) and `before` (the `next` of the previous "
        "page) page through them.",
        response=answers.admin.SessionList,
    ),
    Endpoint(
        "get_session",
        "GET",
        API + "/sessions/{session}",
        "keeper",
        "GetSession",
        GetSession,
        "An agent session: its steps and notes",
        "trace",
        policy=caller(),
        response=answers.admin.Session,
    ),
    Endpoint(
        "list_domains",
        "GET",
        API + "/domains",
        "keeper",
        "ListDomains",
        ListDomains,
        "The Domains the caller holds a grant in",
        "admin",
        policy=caller(),
        response=answers.admin.DomainList,
    ),
    Endpoint(
        "create_domain",
        "POST",
        API + "/domains",
        "keeper",
        "CreateDomain",
        CreateDomain,
        "Create a Domain from a schema document",
        "admin",
        policy=admin_only(),
        success=201,
        problems=(409,),
        response=answers.admin.CreatedDomain,
    ),
    Endpoint(
        "get_domain",
        "GET",
        DOMAIN,
        "keeper",
        "GetDomain",
        GetDomain,
        "A Domain",
        "admin",
        policy=grant(),
        response=answers.admin.DomainView,
    ),
    Endpoint(
        "create_grant",
        "POST",
        DOMAIN + "/grants",
        "keeper",
        "CreateGrant",
        CreateGrant,
        "Grant a principal a role on branches (optionally narrowed to Kinds)",
        "admin",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), delegates=Delegation.GRANT),
        success=201,
        response=answers.admin.Grant,
    ),
    Endpoint(
        "delete_grant",
        "DELETE",
        DOMAIN + "/grants/{grant_id}",
        "keeper",
        "DeleteGrant",
        DeleteGrant,
        "Withdraw a grant",
        "admin",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), target=Target.GRANT, delegates=Delegation.GRANT),
        clears_cache=True,
        response=answers.admin.Deleted,
    ),
]
