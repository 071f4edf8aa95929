"""What the reads whose request is a JSON document answer: context packs, graph walks, search,
resolve and query with their coverage blocks (keeper's context/ and reads/neighborhood.py,
search.py, resolve/, query.py, coverage.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import (
    Answer,
    Count,
    Cursor,
    Extraction,
    RecordEntry,
    RecordHeader,
    Ref,
    RevisionId,
    SourceCoverage,
    Timestamp,
    Values,
)


class PackSeed(Answer, kw_only=True):
    """A seed Record of the pack (never trimmed)."""

    ref: Ref
    title: str | None
    values: Values
    updated_revision: RevisionId | UnsetType = UNSET


class PackNeighbor(Answer, kw_only=True):
    """A Record around the seeds, at its depth; trimming may empty its values."""

    ref: Ref
    title: str | None
    depth: Annotated[int, Meta(ge=1)]
    values: Values


class PackLink(Answer, kw_only=True):
    """A Link between Records of the pack (values only when it has some)."""

    from_: Ref = msgspec.field(name="from")
    to: Ref
    values: Values | UnsetType = UNSET


class PackAttribute(Answer, kw_only=True):
    """An Attribute of a Kind in the pack (its description trimmed first)."""

    name: str
    type: str
    description: str | UnsetType = UNSET


class PackKind(Answer, kw_only=True):
    """A Kind in the pack."""

    name: str
    description: str
    key: list[str]
    title: str | None
    attributes: list[PackAttribute]


class PackRelation(Answer, kw_only=True):
    """A Relation in the pack."""

    name: str
    inverse: str | None
    from_: str = msgspec.field(name="from")
    to: str
    cardinality: str
    description: str


class PackSchema(Answer, kw_only=True):
    """The schema of what is in the pack."""

    kinds: list[PackKind]
    relations: list[PackRelation]


class RecentChange(Answer, kw_only=True):
    """A change to a Record of the pack, newest first."""

    revision: RevisionId
    at: Timestamp
    ref: Ref
    change: Literal["created", "modified", "deleted"]
    attributes: list[str]
    actor: str
    origin: Annotated[str, Meta(description="The origin's type: operation, import, source_sync, merge")]
    message: str


class SeedLineage(Answer, kw_only=True):
    """The values of a seed that one Revision set; `extractions` the evidence of those of them that
    were extracted, by Attribute."""

    ref: Ref
    attributes: list[str]
    origin: str | None
    actor: str
    at: Timestamp
    revision: RevisionId
    extractions: dict[str, Extraction] | UnsetType = UNSET


class Budget(Answer, kw_only=True):
    """The token estimate per section, what was trimmed to fit and how much (`omitted`), whether the
    seeds alone are over the budget, and whether the graph caps cut the neighborhood (`capped`)."""

    limit_tokens: Count
    used_tokens: Count
    chars_per_token: float
    sections: dict[str, int]
    trimmed: list[str]
    omitted: dict[str, int]
    over_budget: bool
    capped: bool


class ContextPack(Answer, kw_only=True):
    """A context pack: the seed Records, their neighborhood, its Links by Relation, and the optional
    sections (schema, recent changes, lineage: absent when not included) within a token budget.
    The Markdown form (format=markdown) is the same pack as text."""

    domain: str
    branch: str
    revision: RevisionId | None
    etag: Annotated[str, Meta(description="The pack's ETag: its head Revision and a request digest")]
    seeds: list[PackSeed]
    neighbors: list[PackNeighbor]
    links: dict[str, list[PackLink]]
    schema: PackSchema | UnsetType = UNSET
    recent_changes: list[RecentChange] | UnsetType = UNSET
    lineage: list[SeedLineage] | UnsetType = UNSET
    budget: Budget


class WalkLink(Answer, kw_only=True):
    """A Link followed (values absent with `values: false`)."""

    relation: str
    from_: Ref = msgspec.field(name="from")
    to: Ref
    values: Values | UnsetType = UNSET
    revision: str


class NeighborRecord(RecordHeader, kw_only=True):
    """A Record of the neighborhood at its depth from the seeds (values absent with `values: false`)."""

    depth: Count
    values: Values | UnsetType = UNSET


class Neighborhood(Answer, kw_only=True):
    """The Records around the seeds and the Links between them; `capped` when the read.traverse
    caps cut the walk."""

    domain: str
    branch: str
    revision: RevisionId | None
    records: list[NeighborRecord]
    links: list[WalkLink]
    capped: bool


class Step(Answer, kw_only=True):
    """One step of the path and the Records it reached."""

    relation: str
    records: Count


class WalkEnd(RecordHeader, kw_only=True):
    """A Record at the end of the path."""

    values: Values | UnsetType = UNSET


class Traversal(Answer, kw_only=True):
    """The Records at the end of a path of Relations, the Links followed and the Records per step."""

    domain: str
    branch: str
    revision: RevisionId | None
    records: list[WalkEnd]
    links: list[WalkLink]
    capped: bool
    path: list[Step]


class SearchHit(RecordHeader, kw_only=True):
    """A Record found, with its score (1.0 is best)."""

    score: float
    values: Values | UnsetType = UNSET


class SearchResults(Answer, kw_only=True):
    """Records matching the text (or nearest the vector), best first, then by Kind and key."""

    domain: str
    branch: str
    revision: RevisionId | None
    text: str | None
    kinds: list[str]
    results: list[SearchHit]
    count: Count


class Predicate(Answer, kw_only=True):
    """A ready filter for POST /query (on a Link Attribute when the candidate names a relation)."""

    attr: str
    op: Literal["eq", "in", "gt", "ge", "lt", "le"]
    value: Any


class DateInterval(Answer, kw_only=True):
    """The days a date said relative to the Revision read was read as: [from, before)."""

    from_: Annotated[str, Meta(description="The first day")] = msgspec.field(name="from")
    before: Annotated[str, Meta(description="The first day after (equal to from for a day's start)")]
    today: Annotated[str, Meta(description="The day of the Revision read (UTC) it counted from")]


class Candidate(Answer, kw_only=True):
    """What a phrase of the text may mean: a Kind, an Attribute (of a Kind, or of a Relation's
    Links), a Relation, stored values of an Attribute, Records by key or title, or a comparison
    on an Attribute (docs/resolve.md)."""

    target: Literal["kind", "attribute", "relation", "value", "record", "comparison"]
    kind: Annotated[str, Meta(description="The Kind; for a Relation and its Attributes, the from Kind")]
    relation: str | UnsetType = UNSET
    to: Annotated[str, Meta(description="The Kind at the other end of the Relation")] | UnsetType = UNSET
    inverse: Annotated[str, Meta(description="The Relation's name read from its to end")] | UnsetType = UNSET
    attribute: str | UnsetType = UNSET
    type: str | UnsetType = UNSET
    values: list[Any] | UnsetType = UNSET
    refs: list[str] | UnsetType = UNSET
    predicate: Predicate | UnsetType = UNSET
    score: float
    level: Annotated[
        str,
        Meta(
            description="exact | synonym | partial | prefix | words | inferred | comparative | state | "
            "similar | embedding"
        ),
    ]
    matched: str
    records: Count | UnsetType = UNSET
    unit: Annotated[str, Meta(description="The unit the Attribute's description gives")] | UnsetType = UNSET
    interval: DateInterval | UnsetType = UNSET


class Hint(Answer, kw_only=True):
    """What the question asks to do with the Records, as POST /query members."""

    hint: Literal["count", "group_by", "order_by", "has_link", "count_links"]
    matched: str
    kind: str | UnsetType = UNSET
    attribute: str | UnsetType = UNSET
    relation: str | UnsetType = UNSET
    path: (
        Annotated[
            list[str], Meta(description="The Relation to follow from the Records of `kind` (POST /traverse)")
        ]
        | UnsetType
    ) = UNSET
    to: Annotated[str, Meta(description="The Kind at the other end of `path`")] | UnsetType = UNSET
    negated: Annotated[bool, Meta(description="has_link: the Records with no such Link")] | UnsetType = UNSET
    order: (
        Annotated[
            Literal["asc", "desc"], Meta(description="count_links: Records ranked by their number of Links")
        ]
        | UnsetType
    ) = UNSET
    aggregate: dict[str, Any] | UnsetType = UNSET
    order_by: list[str] | UnsetType = UNSET
    limit: Annotated[int, Meta(ge=1, description="The number of Records said (top-k)")] | UnsetType = UNSET
    score: float | UnsetType = UNSET
    level: Annotated[str, Meta(description="superlative: inferred from the word's dimension")] | UnsetType = (
        UNSET
    )


class Skipped(Answer, kw_only=True):
    """A level that did not run, and why."""

    level: str
    reason: str


class ResolveCoverage(Answer, kw_only=True):
    """The query's coverage of the Kinds the candidates name and the Attributes their predicates
    use, and the words nothing matched that are real gaps (not function words or numbers).
    Statistics and Sources describe the default branch head only (`omitted` says why)."""

    kinds: list[KindCoverage]
    attributes: list[AttributeCoverage]
    unknown: list[str]
    sources: list[SourceCoverage]
    notes: list[str]
    omitted: str | UnsetType = UNSET


class ResolveResult(Answer, kw_only=True):
    """The words of a question grounded in the schema and the stored values."""

    domain: str
    branch: str
    revision: RevisionId | None
    candidates: list[Candidate]
    unmatched: list[str]
    hints: list[Hint]
    skipped: list[Skipped]
    coverage: ResolveCoverage | UnsetType = UNSET


class KindCoverage(Answer, kw_only=True):
    """A Kind read: its Records, counted at `as_of` (`approximate` when older than the head)."""

    kind: str
    records: Count
    as_of: RevisionId | None
    approximate: bool


class AttributeCoverage(Answer, kw_only=True):
    """An Attribute the query used, and how many Records lack a value."""

    kind: str
    attribute: str
    missing: Annotated[float, Meta(ge=0, le=1, description="The share of Records without a value")]
    missing_records: Count
    used_in: list[Literal["where", "select", "group_by"]]


class QueryCoverage(Answer, kw_only=True):
    """What the answer covers: read it before concluding that nothing matches. Statistics and
    Sources describe the default branch head only (`omitted` says so elsewhere)."""

    kinds: list[KindCoverage]
    attributes: list[AttributeCoverage]
    sources: list[SourceCoverage]
    notes: list[str]
    omitted: str | UnsetType = UNSET


class Group(Answer, kw_only=True):
    """A value of the grouping Attribute (canonical; null for Records without one) and its count."""

    value: Any
    count: Count


class AggregateCounts(Answer, kw_only=True):
    """Counts of the matching Records, in all or per value of `group_by`."""

    count: Count
    group_by: str | UnsetType = UNSET
    groups: list[Group] | UnsetType = UNSET


class QueryResult(Answer, kw_only=True):
    """The Records matching a query (a page: `records`, `count`, `next_cursor`), or with `aggregate`
    their counts; and the coverage block unless the request said `"coverage": false`."""

    domain: str
    branch: str
    revision: RevisionId | None
    kind: str | UnsetType = UNSET
    trait: str | UnsetType = UNSET
    records: list[RecordEntry] | UnsetType = UNSET
    count: Count | UnsetType = UNSET
    next_cursor: Cursor | UnsetType = UNSET
    aggregate: AggregateCounts | UnsetType = UNSET
    coverage: QueryCoverage | UnsetType = UNSET


__all__ = [
    "ContextPack",
    "Neighborhood",
    "QueryResult",
    "ResolveResult",
    "SearchResults",
    "Traversal",
]
