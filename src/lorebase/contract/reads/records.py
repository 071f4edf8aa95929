"""Reads of the graph named by their path and query string: one Record and its Links, pages of a
Kind's Records and of a Relation's Links, a Revision, a Record's history, lineage and explanation,
diffs and data health."""

from __future__ import annotations

from typing import Annotated, Literal

from lorebase.contract import answers
from lorebase.contract._base import DOMAIN, RECORD
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import (
    BranchRef,
    Cursor,
    DomainName,
    Limit,
    Name,
    RevisionRef,
    bounded,
)
from lorebase.contract.policy import P, Scope, grant

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
]
