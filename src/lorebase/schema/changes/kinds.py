"""add_kind, rename_kind, change_kind and remove_kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.schema.changes._base import ChangesBase
from lorebase.schema.changes.plan import KindMigration

_KIND_MEMBERS = ("description", "title", "aliases", "stewards", "implements")


class KindChanges(ChangesBase):
    """The ops on Kinds."""

    def _add_kind(self, item: Mapping[str, Any], path: str) -> None:
        name = item.get("kind")
        definition = self.definition(item, path)
        if not isinstance(name, str) or not name or definition is None:
            if not isinstance(name, str) or not name:
                self.issue(f"{path}.kind", "change.required", "add_kind names the Kind (kind)")
            return
        if name in self.doc["kinds"]:
            self.issue(f"{path}.kind", "change.exists", f"Kind {name!r} exists already")
            return
        self.doc["kinds"][name] = definition
        self.added_kinds.add(name)
        self.summary.append({"op": "add_kind", "target": name})

    def _rename_kind(self, item: Mapping[str, Any], path: str) -> None:
        kind = self.kind(item, path)
        if kind is None:
            return
        old = item["kind"]
        new = self.new_name(item, path, self.doc["kinds"], "Kind")
        if new is None:
            return
        vault = [
            n for n, a in (kind.get("attributes") or {}).items() if isinstance(a, dict) and a.get("vault")
        ]
        if vault:
            self.issue(
                f"{path}.kind",
                "change.vault",
                f"{old} cannot be renamed: it keeps {', '.join(vault)} in the vault, whose entries are "
                "shared by every branch and the history and are erased and cleared by Kind and Record "
                "key, so after a rename an erasure under the new name would miss the values kept under "
                f"{old!r}. Instead add a Kind named {new!r} (add_kind), write the Records to it (an "
                f"import or an Operation: their vault values get entries under {new!r}), then remove "
                f"{old} (remove_kind with delete_data: true); erase a person under both names while "
                f"{old}'s history matters",
            )
            return
        self.doc["kinds"] = {new if n == old else n: k for n, k in self.doc["kinds"].items()}
        for relation in self.doc["relations"].values():
            for end in ("from", "to"):
                if isinstance(relation, dict) and relation.get(end) == old:
                    relation[end] = new
        for name, lens in self.doc["lenses"].items():
            kinds = lens.get("kinds") if isinstance(lens, dict) else None
            if isinstance(kinds, list) and old in kinds:
                lens["kinds"] = [new if k == old else k for k in kinds]
                self.touches["lenses"].add(name)
        for name, operation in self.doc["operations"].items():
            for edit in (operation.get("edits") or []) if isinstance(operation, dict) else []:
                if isinstance(edit, dict) and edit.get("kind") == old:
                    edit["kind"] = new
                    self.touches["operations"].add(name)
        for source in self.doc["sources"].values():
            kinds = source.get("kinds") if isinstance(source, dict) else None
            if isinstance(kinds, list) and old in kinds:
                source["kinds"] = [new if k == old else k for k in kinds]
        migration = self.kinds.pop(old, None) or KindMigration()
        self.backfills = {(new if k == old else k, a): spec for (k, a), spec in self.backfills.items()}
        self.merges = {(new if k == old else k, a): spec for (k, a), spec in self.merges.items()}
        if old in self.added_kinds:  # added by this change set: no Records to move
            self.added_kinds = {new if k == old else k for k in self.added_kinds}
        else:
            original = next((o for o, n in self.renamed_kinds.items() if n == old), old)
            migration.renamed_from = original
            self.renamed_kinds[original] = new
        self.kinds[new] = migration
        self.summary.append({"op": "rename_kind", "target": old, "to": new})

    def _change_kind(self, item: Mapping[str, Any], path: str) -> None:
        kind = self.kind(item, path)
        definition = self.definition(item, path)
        if kind is None or definition is None:
            return
        for member, value in definition.items():
            if member not in _KIND_MEMBERS:
                self.issue(
                    f"{path}.definition.{member}",
                    "change.member",
                    f"change_kind sets {', '.join(_KIND_MEMBERS)}; {member} changes through its own op",
                )
                continue
            if member == "stewards" and isinstance(value, list):
                self.weaken(
                    item["kind"],
                    "stewards",
                    [s for s in kind.get("stewards") or [] if s not in value],
                    "no longer reviews (is no longer assigned) the Proposals touching it",
                )
            kind[member] = value
        self.summary.append({"op": "change_kind", "target": item["kind"], "members": sorted(definition)})

    def _remove_kind(self, item: Mapping[str, Any], path: str) -> None:
        if self.kind(item, path) is None:
            return
        name = item["kind"]
        del self.doc["kinds"][name]
        original = next((o for o, n in self.renamed_kinds.items() if n == name), name)
        self.renamed_kinds.pop(original, None)
        if name not in self.added_kinds:
            self.removed_kinds[original] = bool(item.get("delete_data"))
        self.kinds.pop(name, None)
        self.summary.append({"op": "remove_kind", "target": name})
