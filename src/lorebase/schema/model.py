"""The loaded schema: Kinds, Relations, Traits, lenses and Operations as frozen values.

`load_schema` builds these from a schema document; nothing here reads documents. Mappings keep the
declaration order of the document and must be treated as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from lorebase.schema.derivations import Derivation
    from lorebase.schema.policy import Policy

__all__ = [
    "ATTRIBUTE_TYPES",
    "BUILTINS",
    "CARDINALITIES",
    "EDIT_OPS",
    "LINK_OPS",
    "PERMISSIONS",
    "RECORD_OPS",
    "SENSITIVITIES",
    "Attribute",
    "DomainSchema",
    "Edit",
    "Kind",
    "Lens",
    "Operation",
    "Relation",
    "Source",
    "Trait",
]

ATTRIBUTE_TYPES = ("string", "text", "integer", "decimal", "boolean", "date", "datetime", "enum")
SENSITIVITIES = ("pii", "confidential", "restricted")
CARDINALITIES = ("one_to_one", "one_to_many", "many_to_one", "many_to_many")
RECORD_OPS = ("upsert_record", "update_record", "delete_record")
LINK_OPS = ("upsert_link", "delete_link")
EDIT_OPS = RECORD_OPS + LINK_OPS
BUILTINS = ("invocation_id", "principal", "now")
PERMISSIONS = (
    "data.read",
    "operation.execute",
    "operation.execute_custom",
    "branch.create",
    "proposal.create",
    "proposal.review",
    "proposal.merge",
    "domain.settings",
    "pii.read",
    "confidential.read",
    "restricted.read",
)


@dataclass(frozen=True)
class Attribute:
    """A typed value slot of a Kind, a Relation (link Attribute), a Trait or an Operation parameter."""

    name: str
    type: str
    precision: int | None = None  # decimal only
    scale: int | None = None  # decimal only
    values: tuple[str, ...] = ()  # enum only
    required: bool = False
    unique: bool = False
    pattern: str | None = None
    min: Decimal | None = None  # a length bound for string/text
    max: Decimal | None = None
    description: str = ""
    aliases: tuple[str, ...] = ()
    value_aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Words that compare or rank by this Attribute when resolving what people say: a comparative
    # ("cheaper": lt, "pricier": gt; said with "than") or a superlative ("cheapest": min, "priciest":
    # max). Ordered types only (docs/schema.md, docs/resolve.md).
    comparatives: dict[str, str] = field(default_factory=dict)
    resolvable: bool | None = None
    sensitivity: tuple[str, ...] = ()
    default: Any = None  # parameters only; already canonical
    derived: str | None = None  # Kind Attributes only: the Derivation as written (see Kind.derivations)
    # A derived Attribute: the neighbour Kinds and the Relations its value is computed over. A caller
    # who cannot read all of them does not see it at all (it would tell about Records they may not
    # see; lorebase_keeper.access.readable).
    reads_kinds: tuple[str, ...] = ()
    reads_relations: tuple[str, ...] = ()
    # The values live in the vault: stored everywhere as {"$vault": <ref>} (docs/erasure.md).
    vault: bool = False

    @property
    def type_name(self) -> str:
        """The type as written in a document: `decimal(10,2)` for decimals, else `type`."""
        if self.type == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return self.type


@dataclass(frozen=True)
class Kind:
    name: str
    description: str = ""
    key: tuple[str, ...] = ()
    title: str | None = None
    aliases: tuple[str, ...] = ()
    implements: tuple[str, ...] = ()
    stewards: tuple[str, ...] = ()
    attributes: dict[str, Attribute] = field(default_factory=dict)
    derivations: dict[str, Derivation] = field(default_factory=dict)  # derived Attribute -> compiled

    @cached_property
    def vault(self) -> tuple[str, ...]:
        """Its vault Attributes (most Kinds have none: their writes pay nothing for the vault)."""
        return tuple(name for name, attribute in self.attributes.items() if attribute.vault)


@dataclass(frozen=True)
class Relation:
    name: str
    from_kind: str
    to_kind: str
    inverse: str | None = None
    cardinality: str = "many_to_many"
    description: str = ""
    attributes: dict[str, Attribute] = field(default_factory=dict)
    required_from: bool = False


@dataclass(frozen=True)
class Trait:
    name: str
    description: str = ""
    attributes: dict[str, Attribute] = field(default_factory=dict)


@dataclass(frozen=True)
class Lens:
    name: str
    description: str = ""
    kinds: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()  # forward or inverse names
    depth: int | None = None
    budget_tokens: int | None = None
    include_schema: bool | None = None
    include_recent_changes: bool | None = None
    include_lineage: bool | None = None


@dataclass(frozen=True)
class Source:
    """A system that delivers Records of some Kinds by source syncs (origin source_sync)."""

    name: str
    kinds: tuple[str, ...] = ()
    stale_after: str = ""  # an ISO 8601 duration as written (P1D, PT6H)
    stale_after_s: float = 0.0  # the same in seconds
    description: str = ""


@dataclass(frozen=True)
class Edit:
    """One edit of an Operation, with its templates as written (`$name`, `${name}`, `$$`)."""

    op: str
    kind: str | None = None  # record ops
    relation: str | None = None  # link ops
    key: Any = None  # record ops: a template string, or a list of them (one per key attribute)
    from_key: Any = None  # link ops
    to_key: Any = None  # link ops
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Operation:
    name: str
    description: str = ""
    parameters: dict[str, Attribute] = field(default_factory=dict)
    edits: tuple[Edit, ...] = ()
    review_policy: Policy | None = None
    side_effects: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ("operation.execute",)


@dataclass(frozen=True)
class DomainSchema:
    description: str = ""
    kinds: dict[str, Kind] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    traits: dict[str, Trait] = field(default_factory=dict)
    lenses: dict[str, Lens] = field(default_factory=dict)
    operations: dict[str, Operation] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    document: dict[str, Any] = field(default_factory=dict)  # normalised; load_schema(document) == self

    def relation_named(self, name: str) -> tuple[Relation, Literal["forward", "inverse"]] | None:
        """The Relation a forward or inverse name refers to, and which way it reads."""
        relation = self.relations.get(name)
        if relation is not None:
            return relation, "forward"
        for relation in self.relations.values():
            if relation.inverse == name:
                return relation, "inverse"
        return None

    def sources_of(self, kind: str) -> list[Source]:
        """The Sources declaring `kind`, in declaration order."""
        return [source for source in self.sources.values() if kind in source.kinds]

    def kinds_implementing(self, trait: str) -> list[str]:
        """Names of the Kinds implementing `trait`, in declaration order."""
        return [kind.name for kind in self.kinds.values() if trait in kind.implements]
