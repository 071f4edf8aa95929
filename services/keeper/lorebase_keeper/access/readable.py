"""What one caller may read of a Domain on one branch: the one answer every read surface asks.

Three rules decide it, and nothing else in keeper decides visibility:

- A grant narrowed to Kinds hides the other Kinds, and with them every Relation with a hidden end
  (the seed's invisible Kinds: a request naming one answers like one naming an unknown Kind).
- A sensitivity tag (pii, confidential, restricted) hides an Attribute's values from a caller
  without its clearance (`<tag>.read`). The Attribute is still named: it is in the schema, and a
  Record lists it under `redacted`. A filter, ordering or grouping on it answers like an unknown one.
- A value computed from anything the caller may not read is itself unreadable. A derived Attribute
  whose Derivation aggregates over a hidden Relation or Kind is *unseen*: left out of the schema,
  values, `redacted`, change lists, lineage, health and resolve, and naming it answers exactly like
  naming an Attribute that does not exist (it would tell which Suppliers have open RiskFlags to
  someone who may not see RiskFlags). A Derivation that reads a sensitive Attribute inherits its
  tags when the schema loads, so it is redacted like what it reads.

`readable(access, domain, branch)` builds the answer once per caller, schema and branch (memoised on
the Access, which the Authenticator keeps for the grants' cache time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lorebase.problems import Problem
from lorebase.schema import Attribute, DomainSchema, Kind, Relation
from lorebase_keeper.access.auth import Access
from lorebase_keeper.domains import Domain


@dataclass(frozen=True)
class Readable:
    """The readable part of one Domain's schema for one caller on one branch."""

    schema: DomainSchema
    branch: str
    permissions: frozenset[str]
    kinds: tuple[str, ...]  # in schema order
    relations: tuple[str, ...]  # both ends readable, in schema order
    _known: Mapping[str, Mapping[str, Attribute]]  # per readable Kind: the Attributes it may name
    _cleared: Mapping[str, frozenset[str]]  # per readable Kind or Relation: values it may read

    def kind(self, name: str) -> Kind | None:
        """The Kind, if the caller may read it (None: unknown to this caller)."""
        return self.schema.kinds.get(name) if name in self._known else None

    def relation(self, name: str) -> tuple[Relation, str] | None:
        """The Relation a forward or inverse name refers to and its direction, if readable."""
        named = self.schema.relation_named(name)
        if named is None or named[0].name not in self.relations:
            return None
        return named

    def attributes(self, kind: str) -> Mapping[str, Attribute]:
        """The Attributes of a readable Kind the caller may know exist (unseen ones left out)."""
        return self._known.get(kind, {})

    def cleared(self, kind_or_relation: str) -> frozenset[str]:
        """The Attributes of a readable Kind or Relation whose values the caller may read."""
        return self._cleared.get(kind_or_relation, frozenset())

    def values(self, kind: str, values: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """A Record's values the caller may read, in declaration order, and the Attributes holding a
        value it may not (`redacted`; unseen ones are in neither)."""
        cleared = self.cleared(kind)
        shown: dict[str, Any] = {}
        redacted: list[str] = []
        for name in self.attributes(kind):
            if name in values:
                if name in cleared:
                    shown[name] = values[name]
                else:
                    redacted.append(name)
        return shown, redacted

    def link_values(self, relation: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """A Link's values the caller may read, in declaration order."""
        cleared = self.cleared(relation)
        attributes = self.schema.relations[relation].attributes
        return {name: values[name] for name in attributes if name in values and name in cleared}

    def trait_attributes(self, trait: str, kinds: list[str]) -> dict[str, Attribute]:
        """The Attributes of a Trait the caller may use over `kinds` (readable Kinds implementing it):
        those it may name and read on every one of them."""
        declared = self.schema.traits[trait].attributes
        return {
            name: attribute
            for name, attribute in declared.items()
            if all(name in self.attributes(k) and name in self.cleared(k) for k in kinds)
        }


def readable_kind(access: Access, domain: Domain, branch: str, name: str) -> Kind:
    """The Kind if the caller may read it on `branch`; an invisible Kind answers like an unknown one."""
    kind = readable(access, domain, branch).kind(name)
    if kind is None:
        raise Problem(404, "not-found", f"unknown Kind {name!r}; GET /schema lists the Kinds you may read")
    return kind


def readable(access: Access, domain: Domain, branch: str) -> Readable:
    """What `access` may read of `domain` on `branch` (memoised per schema and branch)."""
    key = (domain.id, branch)
    cached = access.views.get(key)
    if cached is not None and cached.schema is domain.schema:
        return cached
    view = _build(access, domain.schema, branch)
    if len(access.views) >= 64:  # a caller reading many branches
        access.views.clear()
    access.views[key] = view
    return view


def _build(access: Access, schema: DomainSchema, branch: str) -> Readable:
    permissions = access.permissions(branch)
    kinds = tuple(access.readable_kinds(branch, list(schema.kinds)))
    visible = set(kinds)
    relations = tuple(
        name for name, r in schema.relations.items() if r.from_kind in visible and r.to_kind in visible
    )
    visible_relations = set(relations)

    def clear(attribute: Attribute) -> bool:
        return all(f"{tag}.read" in permissions for tag in attribute.sensitivity)

    def seen(attribute: Attribute) -> bool:
        return set(attribute.reads_kinds) <= visible and set(attribute.reads_relations) <= visible_relations

    known: dict[str, Mapping[str, Attribute]] = {}
    cleared: dict[str, frozenset[str]] = {}
    for name in kinds:
        attributes = {a: attr for a, attr in schema.kinds[name].attributes.items() if seen(attr)}
        known[name] = attributes
        cleared[name] = frozenset(a for a, attr in attributes.items() if clear(attr))
    for name in relations:
        attributes = schema.relations[name].attributes
        cleared[name] = frozenset(a for a, attr in attributes.items() if clear(attr))
    return Readable(schema, branch, permissions, kinds, relations, known, cleared)


__all__ = ["Readable", "readable", "readable_kind"]
