"""A three-way merge of schema documents, element by element (docs/schema.md, "Branches, Proposals and
merges").

The elements are: the document's `description`; each Kind's own members (all but its Attributes);
each Attribute of a Kind; each Relation, Trait, lens, Operation and Source. An element is named by
what it was called at the merge base, so a rename is a change of that element (its name), not a
removal and an addition: each side's renames come from its change sets (`Renames`). Per element:
changed on one side only, that side's version is taken; changed on both sides the same way, that
version; changed on both sides differently (a removal against a change counts), a conflict naming
the element with the base's, ours (the target's) and theirs (the source's) versions.

References to Kinds, Relations and Traits (a Relation's `from` and `to`, a lens's `kinds`,
`relations` and `traits`, a Kind's `implements`, an edit's `kind` and `relation`) are compared by the element they name, so renaming a Kind on one
side does not make every Relation that reaches it a change of that side; the merged document names
each element by its merged name.

Pure: no store, no keeper. Keeper's merge (lorebase_keeper.merge.schema_merge) loads the result
with every rule of the schema document.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ElementConflict", "Renames", "merge_documents"]

_MEMBERS = {
    "relations": "relation",
    "traits": "trait",
    "lenses": "lens",
    "operations": "operation",
    "sources": "source",
}
_ADDED = "+"  # an element the base did not have is named by "+" and its name on the side


@dataclass(frozen=True)
class Renames:
    """What one side's change sets renamed since the merge base: base name -> name on that side."""

    kinds: Mapping[str, str] = field(default_factory=dict)
    relations: Mapping[str, str] = field(default_factory=dict)
    attributes: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (base Kind, base Attribute)
    traits: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ElementConflict:
    """An element both sides changed differently: its name at the base (or as added), and each
    version (None: absent on that side)."""

    element: str
    base: Any
    ours: Any
    theirs: Any


@dataclass
class _Side:
    """One document as elements keyed by their base identity, in the document's order."""

    kinds: dict[str, Any] = field(default_factory=dict)  # id -> {"name", "members"}
    attributes: dict[tuple[str, str], Any] = field(default_factory=dict)  # (kind id, id) -> {"name", ...}
    whole: dict[tuple[str, str], Any] = field(default_factory=dict)  # (member, id) -> {"name", ...}
    description: Any = None


def _elements(document: Mapping[str, Any], renames: Renames, base: Mapping[str, Any] | None) -> _Side:
    """The document's elements keyed by their identity: the name at the base (a side's renames
    followed back), or "+" and its name for an element the base did not have."""
    base = document if base is None else base
    base_kinds: Mapping[str, Any] = base.get("kinds") or {}
    kind_ids = {new: old for old, new in renames.kinds.items()}
    relation_ids = {new: old for old, new in renames.relations.items()}
    trait_ids = {new: old for old, new in renames.traits.items()}

    def kind_id(name: Any) -> Any:
        if not isinstance(name, str):
            return name
        if name in kind_ids:
            return kind_ids[name]
        return name if name in base_kinds and name not in renames.kinds else _ADDED + name

    def member_id(member: str, name: str) -> str:
        ids, renamed = {
            "relations": (relation_ids, renames.relations),
            "traits": (trait_ids, renames.traits),
        }.get(member, ({}, {}))
        if name in ids:
            return ids[name]
        return name if name in (base.get(member) or {}) and name not in renamed else _ADDED + name

    def relation_id(name: Any) -> Any:
        return member_id("relations", name) if isinstance(name, str) else name

    def trait_id(name: Any) -> Any:
        return member_id("traits", name) if isinstance(name, str) else name

    side = _Side(description=document.get("description"))
    for name, kind in (document.get("kinds") or {}).items():
        identity = kind_id(name)
        members = {k: copy.deepcopy(v) for k, v in kind.items() if k != "attributes"}
        if isinstance(members.get("implements"), list):
            members["implements"] = [trait_id(t) for t in members["implements"]]
        side.kinds[identity] = {"name": name, "members": members}
        base_attributes = (base_kinds.get(identity) or {}).get("attributes") or {}
        renamed = {old: new for (k, old), new in renames.attributes.items() if k == identity}
        attribute_ids = {new: old for old, new in renamed.items()}
        for attribute, definition in (kind.get("attributes") or {}).items():
            if attribute in attribute_ids:
                attribute_id = attribute_ids[attribute]
            elif attribute in base_attributes and attribute not in renamed:
                attribute_id = attribute
            else:
                attribute_id = _ADDED + attribute
            side.attributes[(identity, attribute_id)] = {
                "name": attribute,
                "definition": copy.deepcopy(definition),
            }
    for member in _MEMBERS:
        for name, definition in (document.get(member) or {}).items():
            side.whole[(member, member_id(member, name))] = {
                "name": name,
                "definition": _refer(member, copy.deepcopy(definition), kind_id, relation_id, trait_id),
            }
    return side


def _refer(
    member: str,
    definition: Any,
    kind: Callable[[Any], Any],
    relation: Callable[[Any], Any],
    trait: Callable[[Any], Any],
) -> Any:
    """The references of a Relation, lens, Operation or Source rewritten by `kind`, `relation` and
    `trait`."""
    if not isinstance(definition, dict):
        return definition
    if member == "relations":
        for end in ("from", "to"):
            definition[end] = kind(definition.get(end))
    elif member in ("lenses", "sources"):
        if isinstance(definition.get("kinds"), list):
            definition["kinds"] = [kind(k) for k in definition["kinds"]]
        if member == "lenses" and isinstance(definition.get("relations"), list):
            definition["relations"] = [relation(r) for r in definition["relations"]]
        if member == "lenses" and isinstance(definition.get("traits"), list):
            definition["traits"] = [trait(t) for t in definition["traits"]]
    elif member == "operations":
        for edit in definition.get("edits") or []:
            if isinstance(edit, dict):
                if "kind" in edit:
                    edit["kind"] = kind(edit["kind"])
                if "relation" in edit:
                    edit["relation"] = relation(edit["relation"])
    return definition


def _body(element: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in element.items() if k != "name"}


def _shown(identity: str) -> str:
    """An element's identity as a conflict names it: its name at the base, or as added."""
    return identity[len(_ADDED) :] if identity.startswith(_ADDED) else identity


def merge_documents(
    base: Mapping[str, Any],
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    *,
    ours_renames: Renames | None = None,
    theirs_renames: Renames | None = None,
    resolve: Callable[[ElementConflict], str | None] | None = None,
) -> tuple[dict[str, Any], list[ElementConflict]]:
    """The merged document and the elements both sides changed differently (each kept as ours in the
    document unless `resolve` answers "theirs" or "ours" for it, which then is no conflict)."""
    b = _elements(base, Renames(), None)
    o = _elements(ours, ours_renames or Renames(), base)
    t = _elements(theirs, theirs_renames or Renames(), base)
    conflicts: list[ElementConflict] = []

    def pick(label: str, vb: Any, vo: Any, vt: Any) -> Any:
        """An element present on every side merges its name and its definition apart (a rename on
        one side and a change on the other both hold)."""
        if isinstance(vb, dict) and isinstance(vo, dict) and isinstance(vt, dict) and "name" in vb:
            whole = (vb, vo, vt)
            name = pick_one(label, vb["name"], vo["name"], vt["name"], whole)
            rest = pick_one(label, _body(vb), _body(vo), _body(vt), whole)
            return {"name": name, **rest}
        return pick_one(label, vb, vo, vt, (vb, vo, vt))

    def pick_one(label: str, vb: Any, vo: Any, vt: Any, whole: tuple[Any, Any, Any]) -> Any:
        if vt == vb or vo == vt:
            return vo
        if vo == vb:
            return vt
        conflict = ElementConflict(label, *whole)
        choice = resolve(conflict) if resolve is not None else None
        if choice == "theirs":
            return vt
        if choice != "ours" and conflict not in conflicts:
            conflicts.append(conflict)
        return vo

    def ids(*maps: Mapping[Any, Any]) -> list[Any]:
        seen: dict[Any, None] = {}
        for mapping in maps:
            for key in mapping:
                seen.setdefault(key, None)
        return list(seen)

    description = pick("description", b.description, o.description, t.description)
    kinds: dict[str, Any] = {}
    for identity in ids(o.kinds, t.kinds, b.kinds):
        chosen = pick(_shown(identity), b.kinds.get(identity), o.kinds.get(identity), t.kinds.get(identity))
        if chosen is not None:
            kinds[identity] = chosen
    attributes: dict[tuple[str, str], Any] = {}
    for key in ids(o.attributes, t.attributes, b.attributes):
        chosen = pick(
            f"{_shown(key[0])}.{_shown(key[1])}",
            b.attributes.get(key),
            o.attributes.get(key),
            t.attributes.get(key),
        )
        if chosen is not None:
            attributes[key] = chosen
    whole: dict[tuple[str, str], Any] = {}
    for key in ids(o.whole, t.whole, b.whole):
        chosen = pick(
            f"{_MEMBERS[key[0]]}:{_shown(key[1])}", b.whole.get(key), o.whole.get(key), t.whole.get(key)
        )
        if chosen is not None:
            whole[key] = chosen

    kind_names = {identity: value["name"] for identity, value in kinds.items()}
    relation_names = {key[1]: value["name"] for key, value in whole.items() if key[0] == "relations"}
    trait_names = {key[1]: value["name"] for key, value in whole.items() if key[0] == "traits"}
    document: dict[str, Any] = {"description": description, "kinds": {}}
    for identity, value in kinds.items():
        kind = dict(value["members"])
        if isinstance(kind.get("implements"), list):
            kind["implements"] = [trait_names.get(t, t) for t in kind["implements"]]
        kind["attributes"] = {
            attribute["name"]: attribute["definition"]
            for (owner, _), attribute in attributes.items()
            if owner == identity
        }
        document["kinds"][value["name"]] = kind
    for member in _MEMBERS:
        document[member] = {
            value["name"]: _refer(
                member,
                copy.deepcopy(value["definition"]),
                lambda k: kind_names.get(k, k),
                lambda r: relation_names.get(r, r),
                lambda t: trait_names.get(t, t),
            )
            for key, value in whole.items()
            if key[0] == member
        }
    return document, conflicts
