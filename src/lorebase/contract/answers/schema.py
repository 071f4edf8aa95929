"""What the schema and branch endpoints answer: the schema as the caller may read it (keeper's
reads/schema_view.py over lorebase.schema's normalised document) and branches (branches/)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import Answer, Count, Cursor, RevisionId, Timestamp

Bound = Annotated[int | str | None, Meta(description="A bound: an integer, or a decimal as a string")]


class AttributeDoc(Answer, kw_only=True):
    """An Attribute (or an Operation's parameter) as the normalised schema document spells it out:
    every member, null when absent."""

    type: Annotated[
        str, Meta(description="string, text, integer, decimal(p,s), boolean, date, datetime, enum")
    ]
    required: bool
    unique: bool
    pattern: str | None
    min: Bound
    max: Bound
    values: list[str] | UnsetType = UNSET  # enums
    description: str
    aliases: list[str]
    value_aliases: dict[str, list[str]]
    comparatives: (
        Annotated[
            dict[str, Literal["lt", "gt", "min", "max"]],
            Meta(description="Words comparing (lt, gt) or ranking (min, max) by the Attribute"),
        ]
        | UnsetType
    ) = UNSET
    resolvable: bool | None
    sensitivity: list[str]
    default: Any = UNSET  # parameters
    derived: str | None | UnsetType = UNSET  # Kinds' Attributes: the Derivation, or null


class KindDoc(Answer, kw_only=True):
    """A Kind (a derived Attribute over what the caller may not read is left out)."""

    name: str
    description: str
    key: list[str]
    title: str | None
    aliases: list[str]
    implements: list[str]
    stewards: list[str]
    attributes: dict[str, AttributeDoc]


class RelationDoc(Answer, kw_only=True):
    """A Relation between two Kinds."""

    name: str
    from_: str = msgspec.field(name="from")
    to: str
    inverse: str | None
    cardinality: Literal["one_to_one", "one_to_many", "many_to_one", "many_to_many"]
    description: str
    required_from: bool
    attributes: dict[str, AttributeDoc]


class TraitDoc(Answer, kw_only=True):
    """A Trait and the readable Kinds implementing it."""

    name: str
    description: str
    attributes: dict[str, AttributeDoc]
    kinds: list[str]


class LensDoc(Answer, kw_only=True):
    """A lens: a read preset (its unreadable Kinds, Traits and Relations left out)."""

    name: str
    description: str
    kinds: list[str]
    traits: list[str]
    relations: list[str]
    depth: int | None
    budget_tokens: int | None
    include_schema: bool | None
    include_recent_changes: bool | None
    include_lineage: bool | None


class EditTemplate(Answer, kw_only=True):
    """An edit an Operation makes, with `$parameter` templates in its key and values."""

    op: str
    kind: str | None | UnsetType = UNSET
    key: Any = UNSET
    relation: str | None | UnsetType = UNSET
    from_: Any = msgspec.field(name="from", default=UNSET)
    to: Any = UNSET
    values: dict[str, Any]


class OperationDoc(Answer, kw_only=True):
    """An Operation the caller may see (every Kind it edits is readable)."""

    name: str
    description: str
    parameters: dict[str, AttributeDoc]
    edits: list[EditTemplate]
    review_policy: Annotated[str | None, Meta(description="The policy's expression, or null")]
    side_effects: list[str]
    permissions: list[str]


class SourceDoc(Answer, kw_only=True):
    """A Source: an outside system that delivers Records of its Kinds (the readable ones)."""

    name: str
    description: str
    kinds: list[str]
    stale_after: str


class SchemaView(Answer, kw_only=True):
    """The schema of a Domain as the caller may read it, in declaration order; invisible Kinds are
    left out with what needs them."""

    domain: str
    branch: str
    description: str
    kinds: list[KindDoc]
    relations: list[RelationDoc]
    traits: list[TraitDoc]
    lenses: list[LensDoc]
    operations: list[OperationDoc]
    sources: list[SourceDoc]
    revision: RevisionId | None
    schema_version: (
        Annotated[
            str, Meta(description="The schema version: SHA-256 of the schema document's canonical JSON")
        ]
        | UnsetType
    ) = UNSET


class SchemaDiff(Answer, kw_only=True):
    """What a Revision changed in the schema: Kinds, Attributes (as Kind.Attribute), Relations,
    Operations and lenses added, removed or changed; `changes`, the change set it applied as it was
    sent (its renames, backfills and maps), empty when none is kept (a merge, or a Revision made
    before migration 0019). A change to an Attribute whose sensitivity the caller is not cleared
    for comes without its `backfill` and `map` (its values), and `withheld` names them."""

    added: list[str]
    removed: list[str]
    changed: list[str]
    changes: list[dict[str, Any]]
    on_invalid: Literal["refuse", "clear"] = "refuse"  # how it was sent; absent: refuse


class RevisionDoc(Answer, kw_only=True):
    """A Revision: its place, who made it, why, from where, and the schema it was committed under."""

    id: RevisionId
    branch: str
    generation: Count
    parents: list[RevisionId]
    author: str
    message: str
    origin: dict[str, str]
    stats: dict[str, Any]
    created_at: Timestamp
    schema_version: str
    schema_changed: bool


class RevisionChange(Answer, kw_only=True):
    """A Record (entity record, name the Kind) or Link (entity link, name the Relation, key
    from->to) the Revision changed, and the names of the changed Attributes. A Record or Link a
    rename of its Kind or Relation moved is listed once, under its new name, as `renamed`, with
    `renamed_from` (`Supplier/S-1001`, `supplied_by/P-1->S-1`)."""

    entity: Literal["record", "link"]
    name: str
    key: str
    change: Literal["created", "modified", "deleted", "renamed"]
    attributes: list[str]
    renamed_from: str | UnsetType = UNSET


class RevisionView(Answer, kw_only=True):
    """One Revision and a page of its changes (in the order it made them); `schema` says what it
    changed in the schema, null when it changed nothing there."""

    domain: str
    branch: str
    revision: RevisionDoc
    changes: list[RevisionChange]
    next_cursor: Cursor
    schema: SchemaDiff | None


class SchemaViolation(Answer, kw_only=True):
    """A Record or Link the new schema would make invalid: which, the Attribute, the rule, why."""

    record: str | UnsetType = UNSET  # Kind/key
    link: str | UnsetType = UNSET  # Relation/from->to
    path: str
    rule: str
    message: str


class SchemaMigrated(Answer, kw_only=True):
    """How many Records and Links the change set's data migration changes."""

    records: Count
    links: Count


class SchemaWrite(Answer, kw_only=True):
    """One value a change set's migration writes (or a derived value it changes): the Record, the
    Attribute, the value before and after."""

    ref: str
    attribute: str
    before: Any
    after: Any


class SchemaWrites(Answer, kw_only=True):
    """What the migration writes: per `Kind.Attribute`, how many values it writes (backfills,
    conversions, values cleared or dropped; a rename moves values and writes none) and how many
    derived values change, with the first of each."""

    counts: dict[str, int]
    derived: dict[str, int]
    sample: list[SchemaWrite]
    derived_sample: list[SchemaWrite]


class SchemaTouches(Answer, kw_only=True):
    """What else a change set reaches: Operations and lenses it rewrote, grants narrowed to a Kind it
    removes or renames, webhooks that will see its Revision."""

    operations: list[str]
    lenses: list[str]
    grants: list[str]
    webhooks: list[str]


class SchemaProtection(Answer, kw_only=True):
    """A change that weakens the protection of existing values: the Kind or Attribute, the member,
    what it no longer has (sensitivity tags, stewards), and what that means."""

    target: str
    member: str
    removed: list[str]
    message: str


class SchemaChange(Answer, kw_only=True):
    """What a change set did (or, in a dry run, would do): the schema version before and after, each
    change, the data migration and what failed there, and what else it reaches."""

    status: Literal["committed", "dry_run"]
    branch: str
    revision: RevisionId | None
    head: RevisionId | None
    schema_version: str
    previous_schema_version: str
    valid: bool
    changes: list[dict[str, Any]]
    migrated: SchemaMigrated
    violations: list[SchemaViolation]
    violation_count: Count
    touches: SchemaTouches
    replayed: bool
    writes: SchemaWrites | None = None
    protection: list[SchemaProtection] = []
    # The values on_invalid: clear cleared (or, in a dry run, would clear), as violations name them.
    cleared: list[SchemaViolation] = []


class SchemaChangeProgress(Answer, kw_only=True):
    """How far a running job's migration is: the Kind it reads and its Records read so far."""

    kind: str
    done: Count
    total: Count


class SchemaChangeJob(Answer, kw_only=True):
    """A change set sent with `Prefer: respond-async`, run in the background by the keeper that
    accepted it (docs/schema.md, "Large migrations"). `status` is `running` until the change set
    answers: then `committed` or `dry_run` with `result` (the answer the synchronous call gives), or
    `failed` with `problem` (the problem details it answers). A caller who does not read every
    value of the branch (a grant narrowed to Kinds, or without the sensitivity clearances) sees
    neither `result`, `progress` nor more of `problem` than its code."""

    id: str
    status: Literal["running", "committed", "dry_run", "failed"]
    domain: str
    branch: str
    dry_run: bool
    created_at: Timestamp
    created_by: str
    finished_at: Timestamp | None
    revision: RevisionId | None
    progress: SchemaChangeProgress | None
    result: SchemaChange | None
    problem: dict[str, Any] | None
    href: str


class SchemaChangeJobList(Answer, kw_only=True):
    """The schema change jobs of branches the caller may read, newest first."""

    domain: str
    jobs: list[SchemaChangeJob]
    next_cursor: Cursor


class Branch(Answer, kw_only=True):
    """A branch: its head, protection, and where it came from."""

    name: str
    head: RevisionId | None
    generation: Count
    default: bool
    protected: bool
    required_approvals: Count
    from_: str | None = msgspec.field(name="from")
    mode: Literal["copy", "overlay"]
    created_by: str
    created_at: Timestamp


class BranchList(Answer, kw_only=True):
    """The branches the caller may read, by name."""

    domain: str
    branches: list[Branch]


class BranchView(Branch, kw_only=True):
    """A branch of a Domain; `revision` is its head."""

    domain: str
    revision: RevisionId | None


class DeletedBranch(Answer, kw_only=True):
    """A deleted branch: its Revisions stay in the history under an archive name."""

    domain: str
    branch: str
    deleted: Literal[True]
    head: RevisionId | None


class Tag(Answer, kw_only=True):
    """A tag: the Revision it names, the branch that committed it (an archive name `name~ms` once
    that branch was deleted), who made the tag and when."""

    domain: str
    name: str
    revision: RevisionId
    branch: str
    created_by: str
    created_at: Timestamp


class TagList(Answer, kw_only=True):
    """The tags of Revisions the caller may read, newest first."""

    domain: str
    tags: list[Tag]
    next_cursor: Cursor


__all__ = [
    "Branch",
    "BranchList",
    "BranchView",
    "DeletedBranch",
    "SchemaChangeJob",
    "SchemaChangeJobList",
    "SchemaView",
    "Tag",
    "TagList",
]
