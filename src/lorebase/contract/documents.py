"""The shapes many answers share: a Revision id, a time, a Record reference and header, a Link, a
Revision summary, a problem issue, a next-step hint, a page cursor.

The response models (lorebase.contract.answers) are made of these. They are documentation and
test oracles, not encoders: keeper's and feed's answer bytes pass through the gateway untouched,
and tests convert real answers into the models strictly (`msgspec.convert(answer, Model)`) to catch
drift. So every model lists every member the answer may hold (`forbid_unknown_fields`): a member
the answer always has is required, one it has only sometimes defaults to UNSET (absent, never null),
and one that may be null says so in its type.

Values travel in canonical form (integers and decimals as JSON strings, booleans as JSON booleans),
so a Record's values are `dict[str, Any]`: their types are the Domain's schema's, not the API's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

RevisionId = Annotated[
    str, Meta(pattern="^[0-9a-f]{64}$", description="A Revision id: the SHA-256 hex of its content")
]
Timestamp = Annotated[
    str,
    Meta(
        description="A UTC time, ISO 8601 with Z (2026-10-01T08:00:04.120044Z)",
        extra_json_schema={"format": "date-time"},
    ),
]
Ref = Annotated[str, Meta(description="A Record reference: Kind/key")]
Values = Annotated[
    dict[str, Any],
    Meta(description="Attribute values in canonical form: integers and decimals are strings"),
]
Cursor = Annotated[
    str | None, Meta(description="Pass it back as `cursor` for the next page; null on the last page")
]
Count = Annotated[int, Meta(ge=0)]


class Answer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of the response models: every member declared, an undeclared one is refused. (Each
    subclass says kw_only=True again: msgspec applies it per class, and it lets a required member
    follow an optional one, in the order the answer has them.)"""


class Issue(Answer, kw_only=True):
    """One thing to change: the member's path, the rule it breaks and a message."""

    path: str
    rule: str
    message: str


class Problem(msgspec.Struct, kw_only=True):
    """RFC 9457 problem details; `type` ends in `code`, `detail` says what to change. Some problems
    carry more members (`branch`, `head`, `reason`, `next`, `parameter`, `retry_after`...)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    issues: list[Issue] | UnsetType = UNSET


class Origin(Answer, kw_only=True):
    """What made a Revision: its type and what it names (an invocation id, an import source, a
    Source, a Proposal...)."""

    type: Annotated[str, Meta(description="operation | import | extraction | source_sync | merge")]
    ref: str


class SpanShown(Answer, kw_only=True):
    """Where in the document an extracted value was read: offsets, a quote, or both."""

    start: int | UnsetType = UNSET
    end: int | UnsetType = UNSET
    quote: str | UnsetType = UNSET


class Extraction(Answer, kw_only=True):
    """The evidence of an extracted value (docs/provenance.md): stored once under `id`, the SHA-256
    of its canonical JSON."""

    id: Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
    document: str
    document_digest: str
    span: SpanShown
    model: str
    prompt_version: str
    extractor: str
    confidence: float | None


class RevisionSummary(Answer, kw_only=True):
    """A Revision as the history shows it: who made it, when, why and how."""

    revision: RevisionId
    at: Timestamp
    author: str
    message: str
    origin: Origin


class Next(Answer, kw_only=True):
    """A call that moves things forward: what it does, and how to make it."""

    action: str
    detail: str
    method: str
    href: str
    permission: str | UnsetType = UNSET


class RecordHeader(Answer, kw_only=True):
    """A Record's reference, Kind, key and title (null when the Kind has no title Attribute or its
    value is hidden or missing)."""

    ref: Ref
    kind: str
    key: str
    title: str | None


class RecordEntry(RecordHeader, kw_only=True):
    """A Record with the values the caller may read."""

    values: Values


class Link(Answer, kw_only=True):
    """A Link between two Records, with its values and the Revision of its last change."""

    from_: Ref = msgspec.field(name="from")
    to: Ref
    values: Values
    revision: str


class Approval(Answer, kw_only=True):
    """The approvals a Proposal needs and has."""

    required: Count
    approvals: Count
    satisfied: bool
    # Approvals given before the source gained a change set the Proposal brings: they no longer
    # count (docs/schema.md, "Branches, Proposals and merges"); ask a schema approver again. Absent: 0.
    stale_for_schema: Count = 0


class Attempt(Answer, kw_only=True):
    """The latest merge attempt of a Proposal: made when it opened, again in the background when its
    source or target head moves, and on a merge request. `source_head` and `target_head` are the
    heads it merged (null for attempts from before they were recorded): when they are the branches'
    heads, the attempt is current."""

    id: str
    result: Annotated[str, Meta(description="fast_forward | merge | conflicts")]
    open_conflicts: Count
    resolved_conflicts: Count
    counts: dict[str, int]
    revision: RevisionId | None
    source_head: RevisionId | None
    target_head: RevisionId | None
    at: Timestamp


class Change(Answer, kw_only=True):
    """One Record or Link a write changed (or would change, in a dry run)."""

    ref: Annotated[str, Meta(description="Kind/key for a Record, relation/from->to for a Link")]
    entity: Annotated[str, Meta(description="record | link")]
    change: Annotated[str, Meta(description="created | modified | deleted")]
    attributes: list[str]


class Edit(Answer, kw_only=True):
    """One edit of an Operation as it runs: on a Record (kind, key) or a Link (relation, from, to)."""

    op: str
    kind: str | UnsetType = UNSET
    key: str | UnsetType = UNSET
    relation: str | UnsetType = UNSET
    from_: str | UnsetType = msgspec.field(name="from", default=UNSET)
    to: str | UnsetType = UNSET
    values: Values | UnsetType = UNSET


class ConflictResolution(Answer, kw_only=True):
    """How a Conflict was resolved: the target's side (ours), the source's (theirs) or a value."""

    choice: Literal["ours", "theirs", "value"]
    value: Any = UNSET


class SourceCoverage(Answer, kw_only=True):
    """How fresh a Source's delivery of a Kind is, on the default branch head."""

    kind: str
    source: str
    last_synced_at: Timestamp | None
    stale_after: Annotated[str, Meta(description="An ISO 8601 duration, as the schema writes it")]
    stale: bool
    unseen_records: Count


__all__ = [
    "Answer",
    "Approval",
    "Attempt",
    "Change",
    "Count",
    "Cursor",
    "Edit",
    "Issue",
    "Link",
    "Next",
    "Origin",
    "Problem",
    "RecordEntry",
    "RecordHeader",
    "Ref",
    "ConflictResolution",
    "RevisionId",
    "RevisionSummary",
    "SourceCoverage",
    "Timestamp",
    "Values",
]
