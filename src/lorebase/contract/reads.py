"""Reads of the graph: one Record and its Links, history, lineage and explanation, diffs, data
health, and the reads whose request is a JSON document (context packs, graph walks, search,
resolve, query)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, RECORD, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import (
    BranchRef,
    Cursor,
    Document,
    DomainName,
    Limit,
    Name,
    Names,
    RevisionRef,
    ShortText,
    Vector,
    bounded,
)
from lorebase.contract.policy import P, Scope, grant
from lorebase.contract.schemas import members

MARKDOWN = ("application/json", "text/markdown")


class GetRecord(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    key: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    links: Annotated[bool, Query] = False
    lineage: Annotated[bool, Query] = False


class GetLinks(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    key: Annotated[Name, Path]
    relation: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    limit: Annotated[Limit, Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class ListRecords(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    limit: Annotated[Limit, Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class ListLinks(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    relation: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    limit: Annotated[Limit, Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class GetRevision(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    revision: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    limit: Annotated[Limit, Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class GetHistory(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    key: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    values: Annotated[bool, Query] = False
    limit: Annotated[Limit, Query] = 0
    cursor: Annotated[Cursor, Query] = ""


class RecordAt(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    kind: Annotated[Name, Path]
    key: Annotated[Name, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""


class Explain(RecordAt, frozen=True, kw_only=True):
    format: Annotated[Literal["", "json", "markdown"], Query] = ""


class Diff(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Query] = ""
    from_revision: Annotated[Revision, Query("from")]
    to_revision: Annotated[Revision, Query("to")]


class Health(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Query] = ""
    at: Annotated[RevisionRef, Query] = ""
    format: Annotated[Literal["", "json", "markdown"], Query] = ""


class KindHealth(Health, frozen=True, kw_only=True):
    kind: Annotated[Name, Path]


# diff's ends: both required (a Revision id, a unique prefix or a tag).
Revision = Annotated[str, bounded(128, "A Revision id, a unique prefix of one or a tag", min_length=1)]
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
        "get_record",
        "GET",
        RECORD,
        "keeper",
        "GetRecord",
        GetRecord,
        "One Record, with Link counts and the lineage of each value",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        read_cache=True,
        response=answers.records.RecordView,
    ),
    Endpoint(
        "get_links",
        "GET",
        RECORD + "/links/{relation}",
        "keeper",
        "GetLinks",
        GetLinks,
        "The Links of a Record along a Relation (forward or inverse name)",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        read_cache=True,
        response=answers.records.LinksPage,
    ),
    Endpoint(
        "list_records",
        "GET",
        DOMAIN + "/kinds/{kind}/records",
        "keeper",
        "ListRecords",
        ListRecords,
        "A page of a Kind's Records, in key order",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        description="Every Record of the Kind at the branch's head or at `at`, a page at a time "
        "(`limit`, default and bounds of read.query; `next_cursor`): a query without a filter and "
        "without coverage, answered like POST /query.",
        etag=True,
        response=answers.graph.QueryResult,
    ),
    Endpoint(
        "list_links",
        "GET",
        DOMAIN + "/relations/{relation}/links",
        "keeper",
        "ListLinks",
        ListLinks,
        "A page of a Relation's Links, ordered by from and to key",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        description="Every Link of the Relation (its forward name) at the branch's head or at `at`, a "
        "page at a time (`limit`, default and bounds of read.links; `next_cursor`). A Relation with an "
        "end the caller may not read answers like an unknown one.",
        etag=True,
        response=answers.records.RelationLinksPage,
    ),
    Endpoint(
        "get_revision",
        "GET",
        DOMAIN + "/revisions/{revision}",
        "keeper",
        "GetRevision",
        GetRevision,
        "One Revision and its changes: Records, Links and the schema",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.EVERY_KIND),
        description="The Revision a Revision id, a unique prefix or a tag names on the branch's "
        "first-parent history (`branch`, default the default branch), who made it and why, the schema "
        "version it was committed under and what it changed in the schema (with the change set it "
        "applied), and a page of the Records "
        "and Links it changed (the Attributes named, not their values: read them with `at`).",
        etag=True,
        response=answers.schema.RevisionView,
    ),
    Endpoint(
        "get_history",
        "GET",
        RECORD + "/history",
        "keeper",
        "GetHistory",
        GetHistory,
        "Every change of one Record on a branch, newest first",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        read_cache=True,
        response=answers.records.HistoryPage,
    ),
    Endpoint(
        "get_lineage",
        "GET",
        RECORD + "/lineage",
        "keeper",
        "GetLineage",
        RecordAt,
        "Where each current value of a Record came from",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        read_cache=True,
        response=answers.records.LineageView,
    ),
    Endpoint(
        "explain",
        "GET",
        RECORD + "/explain",
        "keeper",
        "Explain",
        Explain,
        "Why a Record exists and why its values are what they are",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        read_cache=True,
        media_types=MARKDOWN,
        response=answers.records.Explanation,
    ),
    Endpoint(
        "diff",
        "GET",
        DOMAIN + "/diff",
        "keeper",
        "Diff",
        Diff,
        "What changed between two Revisions of a branch",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        etag=True,
        response=answers.records.DiffResult,
    ),
    Endpoint(
        "get_health",
        "GET",
        DOMAIN + "/health",
        "keeper",
        "GetHealth",
        Health,
        "How sound the data of a branch is",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.READABLE),
        etag=True,
        media_types=MARKDOWN,
        response=answers.records.DataHealth,
    ),
    Endpoint(
        "get_kind_health",
        "GET",
        DOMAIN + "/kinds/{kind}/health",
        "keeper",
        "GetHealth",
        KindHealth,
        "How sound the Records of one Kind are",
        "reads",
        policy=grant(P.DATA_READ, scope=Scope.KIND, kind="kind"),
        etag=True,
        media_types=MARKDOWN,
        response=answers.records.DataHealth,
    ),
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

__all__ = ["ENDPOINTS"]
