"""add_relation, change_relation (with its `map` of link values), rename_relation and
remove_relation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.schema.changes._base import ChangesBase

_RELATION_MEMBERS = ("description", "cardinality", "required_from", "attributes")


class RelationChanges(ChangesBase):
    """The ops on Relations."""

    def relation(self, item: Mapping[str, Any], path: str) -> str | None:
        """The Relation the item names, as the document has it (None: said why)."""
        name = item.get("relation")
        if not isinstance(name, str) or name not in self.doc["relations"]:
            known = ", ".join(self.doc["relations"]) or "none"
            self.issue(
                f"{path}.relation", "change.unknown", f"unknown Relation {name!r}; Relations are: {known}"
            )
            return None
        return name

    def _add_relation(self, item: Mapping[str, Any], path: str) -> None:
        name = item.get("relation")
        definition = self.definition(item, path)
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.relation", "change.required", "add_relation names the Relation")
            return
        if definition is None:
            return
        if name in self.doc["relations"]:
            self.issue(f"{path}.relation", "change.exists", f"Relation {name!r} exists already")
            return
        self.doc["relations"][name] = definition
        self.added_relations.add(name)
        self.summary.append({"op": "add_relation", "target": name})

    def _change_relation(self, item: Mapping[str, Any], path: str) -> None:
        definition = self.definition(item, path)
        name = self.relation(item, path)
        if name is None or definition is None:
            return
        if name in self.renamed_relations.values():
            self.issue(
                f"{path}.relation",
                "change.renamed",
                f"{name} is renamed in this change set: change its members in a change set of its own",
            )
            return
        relation = self.doc["relations"][name]
        for member, value in definition.items():
            if member not in _RELATION_MEMBERS:
                hint = (
                    "a Link cannot move to other Kinds: add a Relation and remove this one"
                    if member in ("from", "to")
                    else "rename_relation changes the names"
                    if member == "inverse"
                    else f"{member!r} is not a member of a Relation"
                )
                self.issue(
                    f"{path}.definition.{member}",
                    "change.member",
                    f"change_relation sets {', '.join(_RELATION_MEMBERS)}; {hint}",
                )
                continue
            relation[member] = value
        self.link_map(item, path, name, relation, definition)
        if name not in self.added_relations:
            self.changed_relations.setdefault(name, set()).update(definition)
        self.summary.append({"op": "change_relation", "target": name, "members": sorted(definition)})

    def link_map(
        self, item: Mapping[str, Any], path: str, name: str, relation: Any, definition: dict[str, Any]
    ) -> None:
        """change_relation's `map`: link Attribute -> (old value as text -> new value), applied
        before its Links' values are read as the link Attributes' new types."""
        given = item.get("map")
        if given is None:
            return
        attributes = relation.get("attributes") if isinstance(relation, dict) else None
        if "attributes" not in definition or not isinstance(attributes, dict):
            self.issue(
                f"{path}.map",
                "change.map",
                "map converts link values to changed link Attributes: it goes with definition.attributes",
            )
            return
        if not isinstance(given, dict):
            self.issue(
                f"{path}.map", "change.map", "map is an object: link Attribute -> {old value: new value}"
            )
            return
        maps = self.link_maps.setdefault(name, {})
        for attribute, value_map in given.items():
            if attribute not in attributes:
                known = ", ".join(attributes) or "none"
                self.issue(
                    f"{path}.map.{attribute}",
                    "change.unknown",
                    f"{name} has no link Attribute {attribute!r} after this change; its link Attributes "
                    f"are: {known}",
                )
            elif not isinstance(value_map, dict):
                self.issue(
                    f"{path}.map.{attribute}",
                    "change.map",
                    "a link Attribute's map is an object: old value -> new value",
                )
            else:
                maps.setdefault(attribute, {}).update(value_map)

    def _rename_relation(self, item: Mapping[str, Any], path: str) -> None:
        old = self.relation(item, path)
        if old is None:
            return
        names = {*self.doc["relations"]} | {
            r.get("inverse")
            for r in self.doc["relations"].values()
            if isinstance(r, dict) and r.get("inverse")
        }
        new = self.new_name(item, path, names - {old}, "Relation or inverse")
        if new is None:
            return
        if old in self.changed_relations:
            self.issue(
                f"{path}.relation",
                "change.renamed",
                f"{old}'s members change in this change set: rename it in a change set of its own",
            )
            return
        definition = self.doc["relations"][old]
        old_inverse = definition.get("inverse") if isinstance(definition, dict) else None
        inverse = item.get("inverse") or old_inverse
        if inverse is not None and (not isinstance(inverse, str) or inverse in names - {old, old_inverse}):
            self.issue(
                f"{path}.inverse",
                "change.exists",
                f"inverse {inverse!r} is another Relation's name or inverse; choose another",
            )
            return
        if isinstance(definition, dict):
            definition["inverse"] = inverse
        self.doc["relations"] = {new if n == old else n: r for n, r in self.doc["relations"].items()}
        renames = {old: new, **({old_inverse: inverse} if old_inverse and inverse else {})}
        for name, lens in self.doc["lenses"].items():
            relations = lens.get("relations") if isinstance(lens, dict) else None
            if isinstance(relations, list) and set(renames) & set(relations):
                lens["relations"] = [renames.get(r, r) for r in relations]
                self.touches["lenses"].add(name)
        for name, operation in self.doc["operations"].items():
            for edit in (operation.get("edits") or []) if isinstance(operation, dict) else []:
                if isinstance(edit, dict) and edit.get("relation") == old:
                    edit["relation"] = new
                    self.touches["operations"].add(name)
        original = next((o for o, n in self.renamed_relations.items() if n == old), old)
        if old in self.added_relations:
            self.added_relations = {new if r == old else r for r in self.added_relations}
        else:
            self.renamed_relations[original] = new
        entry: dict[str, Any] = {"op": "rename_relation", "target": old, "to": new}
        if inverse != old_inverse:
            entry["inverse"] = inverse
        self.summary.append(entry)

    def _remove_relation(self, item: Mapping[str, Any], path: str) -> None:
        name = self.relation(item, path)
        if name is None:
            return
        del self.doc["relations"][name]
        self.changed_relations.pop(name, None)
        self.link_maps.pop(name, None)
        original = next((o for o, n in self.renamed_relations.items() if n == name), name)
        self.renamed_relations.pop(original, None)
        if name not in self.added_relations:
            self.removed_relations[original] = bool(item.get("delete_data"))
        self.summary.append({"op": "remove_relation", "target": name})
