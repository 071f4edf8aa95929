"""The reads whose request is a JSON document: context packs, graph walks (neighborhood,
traverse), search, resolve and query."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Request
from lorebase.contract.fields import (
    BranchRef,
    Cursor,
    Document,
    DomainName,
    Name,
    Names,
    RevisionRef,
    ShortText,
    Vector,
)
from lorebase.contract.policy import P, Scope, grant
from lorebase.contract.reads.records import MARKDOWN
from lorebase.contract.schemas import members

Tokens = Annotated[int, Meta(ge=0, le=10_000_000)]
Depth = Annotated[int, Meta(ge=0, le=100)]
Refs = Annotated[list[Name], Meta(min_length=1, max_length=1000, description="Record references: Kind/key")]
RelationPath = Annotated[
    list[Name], Meta(min_length=1, max_length=1000, description="Relation names (forward or inverse)")
]


class Aggregate(Body, frozen=True, kw_only=True):
    """Counts instead of Records: `{"count": true}`, or per value of an Attribute with `group_by`."""

    count: bool | None = None
    group_by: Name | None = None


@members(one_of=("kind", "trait"))
class QueryBody(Body, frozen=True, kw_only=True):
    """A query (docs/query.md): exactly one of kind or trait; `where` is the filter DSL, checked
    against the schema by keeper; `limit` and `branch` left out take the settings and the default
    branch."""

    kind: Name | None = None
    trait: Name | None = None
    where: Document | None = None
    select: Names | None = None
    order_by: Names | Name | None = None
    limit: Annotated[int, Meta(ge=1, le=1_000_000)] | None = None
    cursor: Cursor | None = None
    aggregate: Aggregate | None = None
    branch: BranchRef | None = None
    at: RevisionRef | None = None
    coverage: bool = True


@members(one_of=("refs", "query", "search"))
class ContextBody(Body, frozen=True, kw_only=True):
    """A context pack: exactly one seed selector (refs, query or search); the members left out take
    the lens's values, then the settings (agents.context)."""

    refs: Refs | None = None
    query: QueryBody | None = None
    search: ShortText | None = None
    branch: BranchRef | None = None
    budget_tokens: Tokens | None = None
    depth: Depth | None = None
    relations: Names | None = None
    traits: Names | None = None
    lens: Name | None = None
    include_schema: bool | None = None
    include_recent_changes: bool | None = None
    include_lineage: bool | None = None
    since: RevisionRef | None = None
    format: Literal["json", "markdown"] = "json"


class NeighborhoodBody(Body, frozen=True, kw_only=True):
    refs: Refs
    depth: Depth | None = None
    relations: Names | None = None
    values: bool = True
    branch: BranchRef | None = None
    at: RevisionRef | None = None


class TraverseBody(Body, frozen=True, kw_only=True):
    from_: Refs = msgspec.field(name="from")
    path: RelationPath
    values: bool = True
    branch: BranchRef | None = None
    at: RevisionRef | None = None


@members(any_of=("text", "query_vector"))
class SearchBody(Body, frozen=True, kw_only=True):
    text: ShortText | None = None
    kinds: Names | None = None
    traits: Names | None = None
    lens: Name | None = None
    limit: Annotated[int, Meta(ge=1, le=100_000)] | None = None
    values: bool = True
    branch: BranchRef | None = None
    query_vector: Vector | None = None


class ResolveBody(Body, frozen=True, kw_only=True):
    text: ShortText
    kinds: Names | None = None
    branch: BranchRef | None = None
    at: RevisionRef | None = None
    query_vector: Vector | None = None
    record_misses: bool = True
    coverage: bool = True


class Context(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: ContextBody


class Neighborhood(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NeighborhoodBody


class Traverse(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: TraverseBody


class Search(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: SearchBody


class Resolve(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: ResolveBody


class QueryCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: QueryBody


ENDPOINTS = [
    Endpoint(
        "context",
        "POST",
        DOMAIN + "/context",
        "keeper",
        "Context",
        Context,
        "A token-budgeted context pack around some Records",
        "agents",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        etag=True,
        media_types=MARKDOWN,
        response=answers.graph.ContextPack,
        example=examples.CONTEXT_PACK,
        request_example=examples.bodies.CONTEXT,
    ),
    Endpoint(
        "neighborhood",
        "POST",
        DOMAIN + "/neighborhood",
        "keeper",
        "Neighborhood",
        Neighborhood,
        "The graph around some Records",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        response=answers.graph.Neighborhood,
        request_example=examples.bodies.NEIGHBORHOOD,
    ),
    Endpoint(
        "traverse",
        "POST",
        DOMAIN + "/traverse",
        "keeper",
        "Traverse",
        Traverse,
        "Follow a path of Relations",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        response=answers.graph.Traversal,
        request_example=examples.bodies.TRAVERSE,
    ),
    Endpoint(
        "search",
        "POST",
        DOMAIN + "/search",
        "keeper",
        "Search",
        Search,
        "Records by text or vector, by Kind, Trait or lens",
        "agents",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        response=answers.graph.SearchResults,
        request_example=examples.bodies.SEARCH,
    ),
    Endpoint(
        "resolve",
        "POST",
        DOMAIN + "/resolve",
        "keeper",
        "Resolve",
        Resolve,
        "Which Kinds, Attributes and stored values the words of a question mean",
        "agents",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        response=answers.graph.ResolveResult,
        example=examples.RESOLVE,
        request_example=examples.bodies.RESOLVE,
    ),
    Endpoint(
        "query",
        "POST",
        DOMAIN + "/query",
        "keeper",
        "Query",
        QueryCall,
        "Records matching a filter, or counts per value, with coverage",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        writes=False,
        response=answers.graph.QueryResult,
        request_example=examples.bodies.QUERY,
    ),
]
