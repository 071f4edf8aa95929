"""The document a change set is applied to, the lookups every change makes, and the dispatch by op."""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from typing import Any

from lorebase.schema.changes.plan import KindMigration

OPS = (
    "add_kind",
    "rename_kind",
    "change_kind",
    "remove_kind",
    "add_attribute",
    "rename_attribute",
    "remove_attribute",
    "change_attribute",
    "add_relation",
    "rename_relation",
    "remove_relation",
    "change_relation",
    "put_operation",
    "remove_operation",
    "put_lens",
    "remove_lens",
    "add_trait",
    "rename_trait",
    "change_trait",
    "remove_trait",
    "split_attribute",
    "merge_attributes",
)


class ChangesBase:
    """The document as the items so far left it, what they ask of the data, and every problem found
    (all of them, by item path: nothing stops at the first)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.doc: dict[str, Any] = copy.deepcopy(dict(document))
        for member in ("kinds", "relations", "traits", "lenses", "operations", "sources"):
            if not isinstance(self.doc.get(member), dict):
                self.doc[member] = {}
        self.start: dict[str, Any] = copy.deepcopy(self.doc["kinds"])  # the Kinds before the change set
        self.issues: list[dict[str, str]] = []
        self.kinds: dict[str, KindMigration] = {}
        self.removed_kinds: dict[str, bool] = {}
        self.removed_relations: dict[str, bool] = {}
        self.summary: list[dict[str, Any]] = []
        self.touches: dict[str, set[str]] = {"operations": set(), "lenses": set()}
        self.backfills: dict[tuple[str, str], tuple[str, Any]] = {}  # (kind, attr) -> (path, spec)
        # merge_attributes: (kind, to) -> (path, backfill spec, reads, the removed Attributes' definitions)
        self.merges: dict[tuple[str, str], tuple[str, Any, dict[str, str], dict[str, Any]]] = {}
        self.renamed_kinds: dict[str, str] = {}  # name before the change set -> name now
        self.renamed_relations: dict[str, str] = {}
        self.renamed_traits: dict[str, str] = {}
        self.changed_relations: dict[str, set[str]] = {}
        self.link_maps: dict[str, dict[str, dict[str, Any]]] = {}  # Relation -> link Attribute -> map
        self.protection: list[dict[str, Any]] = []
        self.added_traits: set[str] = set()
        self.added_kinds: set[str] = set()  # Kinds this change set adds (no Records to move)
        self.added_relations: set[str] = set()

    def issue(self, path: str, rule: str, message: str) -> None:
        self.issues.append({"path": path, "rule": rule, "message": message})

    def migration(self, kind: str) -> KindMigration:
        return self.kinds.setdefault(kind, KindMigration())

    # Lookups that report

    def kind(self, item: Mapping[str, Any], path: str) -> dict[str, Any] | None:
        name = item.get("kind")
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.kind", "change.required", f"{item.get('op')} names a Kind (kind)")
            return None
        found = self.doc["kinds"].get(name)
        if found is None:
            known = ", ".join(self.doc["kinds"]) or "none"
            self.issue(f"{path}.kind", "change.unknown", f"unknown Kind {name!r}; Kinds are: {known}")
        return found  # type: ignore[no-any-return]

    def attribute(self, item: Mapping[str, Any], path: str) -> tuple[dict[str, Any], str] | None:
        kind = self.kind(item, path)
        if kind is None:
            return None
        name = item.get("attribute")
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.attribute", "change.required", f"{item.get('op')} names an Attribute")
            return None
        if name not in kind["attributes"]:
            known = ", ".join(kind["attributes"]) or "none"
            self.issue(
                f"{path}.attribute",
                "change.unknown",
                f"{item['kind']} has no Attribute {name!r}; its Attributes are: {known}",
            )
            return None
        return kind, name

    def definition(self, item: Mapping[str, Any], path: str) -> dict[str, Any] | None:
        definition = item.get("definition")
        if not isinstance(definition, dict):
            self.issue(
                f"{path}.definition",
                "change.required",
                f"{item.get('op')} needs a definition (an object as in the schema document)",
            )
            return None
        return copy.deepcopy(definition)

    def new_name(self, item: Mapping[str, Any], path: str, taken: Collection[Any], what: str) -> str | None:
        name = item.get("to")
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.to", "change.required", "a rename names the new name (to)")
            return None
        if name in taken:
            self.issue(f"{path}.to", "change.exists", f"{what} {name!r} exists already; choose another name")
            return None
        return name

    # The changes

    def apply(self, index: int, item: Mapping[str, Any]) -> None:
        path = f"changes[{index}]"
        op = item.get("op")
        method = getattr(self, f"_{op}", None) if op in OPS else None
        if method is None:
            self.issue(f"{path}.op", "change.op", f"unknown op {op!r}; ops are: {', '.join(OPS)}")
            return
        method(item, path)

    def weaken(self, target: str, member: str, removed: list[Any], what: str) -> None:
        """Say that a change weakens the protection of existing values (the answer's `protection`)."""
        if removed:
            self.protection.append(
                {
                    "target": target,
                    "member": member,
                    "removed": removed,
                    "message": f"{target}: {', '.join(map(str, removed))} {what}",
                }
            )
