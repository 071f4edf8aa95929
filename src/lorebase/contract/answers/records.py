"""What the reads of one Record and of a branch's history answer: a Record, its Links, history,
lineage and explanation, diffs, and data health (keeper's reads/records.py, history.py,
lineage.py, explain.py, diff.py, health.py). Each names the Revision it describes (`revision`,
null on a branch without one)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import (
    Answer,
    ConflictResolution,
    Count,
    Cursor,
    Extraction,
    Link,
    Origin,
    RecordEntry,
    Ref,
    RevisionId,
    RevisionSummary,
    Timestamp,
    Values,
)

Redacted = Annotated[
    list[str] | UnsetType, Meta(description="Attributes whose values were withheld (sensitive)")
]


class OperationNamed(Answer, kw_only=True):
    """The Operation whose execution set a value."""

    name: str
    invocation_id: str


class ImportNamed(Answer, kw_only=True):
    """The import that set a value."""

    source: str


class SyncNamed(Answer, kw_only=True):
    """The Source sync that set a value."""

    name: str
    sync: int | None
    mode: Literal["full", "incremental"] | None
    synced_at: Timestamp


class ProposalNamed(Answer, kw_only=True):
    """A Proposal that brought a value to the branch."""

    id: str
    title: str | None


class Lineage(Answer, kw_only=True):
    """Where a value came from: the Revision of its last change and what its origin names. A value
    merged from another branch keeps its provenance: `brought_by` is the Revision that brought it
    here, `proposal` the Proposal merged then, `merge_resolution` the Conflict resolution that set it.
    A value a reconciliation merge took from the removed Record keeps that Record's Revision;
    `brought_by` is the merge Revision and `merged_from` the removed Record."""

    revision: RevisionId
    origin: Origin
    actor: str
    at: Timestamp
    message: str
    operation: OperationNamed | UnsetType = UNSET
    import_: ImportNamed | UnsetType = msgspec.field(name="import", default=UNSET)
    source: SyncNamed | UnsetType = UNSET
    brought_by: RevisionId | None | UnsetType = UNSET
    proposal: ProposalNamed | None
    merge_resolution: ConflictResolution | UnsetType = UNSET
    merged_from: Ref | UnsetType = UNSET
    extraction: Extraction | UnsetType = UNSET


class RecordView(RecordEntry, kw_only=True):
    """One Record: its values in Attribute declaration order, the Revision that last changed it, and
    with `links=true` its Link counts per Relation name (forward from it, inverse to it), with
    `lineage=true` the lineage of each shown value."""

    domain: str
    branch: str
    revision: RevisionId | None
    updated_revision: RevisionId
    redacted: Redacted = UNSET
    links: dict[str, int] | UnsetType = UNSET
    lineage: dict[str, Lineage] | UnsetType = UNSET


class LinksPage(Answer, kw_only=True):
    """The Links of a Record along a Relation (`name` as asked, `relation` its forward name),
    ordered by (from key, to key)."""

    domain: str
    branch: str
    revision: RevisionId | None
    ref: Ref
    relation: str
    name: str
    direction: Literal["forward", "inverse"]
    links: list[Link]
    other_kind: str
    next_cursor: Cursor


class RelationLinksPage(Answer, kw_only=True):
    """A page of a Relation's Links, ordered by (from key, to key)."""

    domain: str
    branch: str
    revision: RevisionId | None
    relation: str
    from_kind: str
    to_kind: str
    links: list[Link]
    next_cursor: Cursor


class Provenance(Answer, kw_only=True):
    """The provenance of one changed Attribute: the Revision and its origin, and for an extracted
    value its evidence."""

    revision: RevisionId
    type: str
    ref: str
    extraction: Extraction | UnsetType = UNSET


class HistoryChange(RevisionSummary, kw_only=True):
    """One change of the Record: the Revision, whether it created, modified or deleted the Record
    (or moved it to its Kind's new name: `renamed`, naming where it came from in `renamed_from`),
    the Attributes it changed with their provenance, and with `values=true` the values before and
    after (null before a creation and after a deletion). A deletion by a reconciliation merge names
    the survivor (`merged_into`)."""

    change: Literal["created", "modified", "deleted", "renamed"]
    attributes: list[str]
    provenance: dict[str, Provenance]
    before: Values | None | UnsetType = UNSET
    after: Values | None | UnsetType = UNSET
    merged_into: Ref | UnsetType = UNSET
    renamed_from: Ref | UnsetType = UNSET


class HistoryPage(Answer, kw_only=True):
    """The changes of one Record on the branch, newest first."""

    domain: str
    branch: str
    revision: RevisionId | None
    ref: Ref
    changes: list[HistoryChange]
    next_cursor: Cursor


class ValueLineage(Lineage, kw_only=True):
    """A value and where it came from."""

    value: Any


class LineageView(Answer, kw_only=True):
    """Per Attribute holding a value, where the value came from; `changes` counts the Record's
    changes up to read.history.lineage_count_max (`changes_truncated`)."""

    domain: str
    branch: str
    revision: RevisionId | None
    ref: Ref
    attributes: dict[str, ValueLineage]
    changes: Count
    changes_truncated: bool
    redacted: Redacted = UNSET


class AttributeLineage(ValueLineage, kw_only=True):
    """An Attribute, its value and where the value came from."""

    name: str


class RecordLink(Answer, kw_only=True):
    """A Link of the Record and the Revision that made it."""

    relation: str
    from_: Ref = msgspec.field(name="from")
    to: Ref
    revision: str


class Explanation(Answer, kw_only=True):
    """Why a Record exists and why its values are what they are: the Revision that created it, per
    Attribute the lineage of its value, its Links (at most agents.explain.max_links), the number of
    its changes, and the merged Proposals that changed it."""

    domain: str
    branch: str
    revision: RevisionId | None
    ref: Ref
    title: str | None
    changes: Count
    changes_truncated: bool
    created: RevisionSummary | None
    attributes: list[AttributeLineage]
    links: list[RecordLink]
    links_truncated: bool
    proposals: list[ProposalNamed]
    redacted: Redacted = UNSET


class DiffEntry(Answer, kw_only=True):
    """A Record or Link added or removed, with its values."""

    ref: Annotated[str, Meta(description="Kind/key, or relation/from->to for a Link")]
    values: Values


class DiffChange(Answer, kw_only=True):
    """A Record or Link changed: the Attributes that changed, their values before and after."""

    ref: str
    attributes: list[str]
    before: dict[str, Any]
    after: dict[str, Any]


class DiffSection(Answer, kw_only=True):
    """What was added, removed and changed."""

    added: list[DiffEntry]
    removed: list[DiffEntry]
    changed: list[DiffChange]


class DiffResult(Answer, kw_only=True):
    """What changed between two Revisions of the branch's first-parent history."""

    domain: str
    branch: str
    from_: RevisionId = msgspec.field(name="from")
    to: RevisionId
    revision: RevisionId
    records: DiffSection
    links: DiffSection


class HealthSummary(Answer, kw_only=True):
    """The totals; `ok` is false when there are violations, orphans, gaps or duplicates of unique
    Attributes (duplicate titles and stale derived values do not fail it)."""

    ok: bool
    kinds: Count
    records: Count
    links: Count
    invalid_records: Count
    orphan_links: Count
    required_gaps: Count
    duplicate_groups: Count
    stale_derived_kinds: Count


class Violations(Answer, kw_only=True):
    """Records breaking one rule on one Attribute, with example keys."""

    rule: str
    attribute: str
    records: Count
    examples: list[str]


class Duplicates(Answer, kw_only=True):
    """Records whose unique or title Attribute is equal once case and spacing are ignored."""

    attribute: str
    reason: Literal["unique", "title"]
    records: Count
    keys: list[str]


class KindHealth(Answer, kw_only=True):
    """The health of one Kind: Records re-validated against the schema (a sample past
    read.health.max_records_validated), duplicates, and Records missing a derived value (null: the
    Kind has no derived Attribute)."""

    kind: str
    records: Count
    last_change: RevisionId | None
    checked: Count
    sampled: bool
    invalid: Count
    violations: list[Violations]
    duplicate_groups: Count
    duplicates: list[Duplicates]
    derived: Count | None


class RelationHealth(Answer, kw_only=True):
    """The health of one Relation: orphan Links, and for a Relation with required_from the Records
    missing their Link (`gaps`)."""

    relation: str
    from_: str = msgspec.field(name="from")
    to: str
    links: Count
    orphans: Count
    orphan_examples: list[str]
    required_from: bool
    gaps: Count | UnsetType = UNSET
    gap_examples: list[str] | UnsetType = UNSET


class DataHealth(Answer, kw_only=True):
    """How sound the data of a branch (or of one Kind) is, computed from its materialised rows."""

    domain: str
    branch: str
    revision: RevisionId | None
    summary: HealthSummary
    kinds: list[KindHealth]
    relations: list[RelationHealth]


class Erasure(Answer, kw_only=True):
    """An erasure: the Records it named, the vault Attributes (`Kind.attribute`) whose values it
    deleted, how many vault entries (refs) it erased (0 when they were erased already), who, when, why."""

    id: str
    domain: str
    records: list[str]
    attributes: list[str]
    refs: Count
    reason: str
    by: str
    at: Timestamp


class ErasureList(Answer, kw_only=True):
    """The erasures of a Domain, newest first."""

    domain: str
    erasures: list[Erasure]
    next_cursor: Cursor


__all__ = [
    "DataHealth",
    "DiffResult",
    "Erasure",
    "ErasureList",
    "Explanation",
    "HistoryPage",
    "Lineage",
    "LineageView",
    "LinksPage",
    "RecordView",
]
