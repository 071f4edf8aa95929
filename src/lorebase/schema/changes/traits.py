"""add_trait, rename_trait, change_trait and remove_trait; put and remove of Operations and lenses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.schema.changes._base import ChangesBase

_TRAIT_MEMBERS = ("description", "attributes")


class TraitChanges(ChangesBase):
    """The ops on Traits, Operations and lenses."""

    def _put(self, member: str, what: str, item: Mapping[str, Any], path: str) -> None:
        name = item.get(what)
        definition = self.definition(item, path)
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.{what}", "change.required", f"put_{what} names the {what}")
            return
        if definition is None:
            return
        self.doc[member][name] = definition
        self.summary.append({"op": f"put_{what}", "target": name})

    def _remove(self, member: str, what: str, item: Mapping[str, Any], path: str) -> None:
        name = item.get(what)
        if not isinstance(name, str) or name not in self.doc[member]:
            known = ", ".join(self.doc[member]) or "none"
            self.issue(f"{path}.{what}", "change.unknown", f"unknown {what} {name!r}; they are: {known}")
            return
        del self.doc[member][name]
        self.summary.append({"op": f"remove_{what}", "target": name})

    def _put_operation(self, item: Mapping[str, Any], path: str) -> None:
        self._put("operations", "operation", item, path)

    def _remove_operation(self, item: Mapping[str, Any], path: str) -> None:
        self._remove("operations", "operation", item, path)

    def _put_lens(self, item: Mapping[str, Any], path: str) -> None:
        self._put("lenses", "lens", item, path)

    def _remove_lens(self, item: Mapping[str, Any], path: str) -> None:
        self._remove("lenses", "lens", item, path)

    def trait(self, item: Mapping[str, Any], path: str) -> dict[str, Any] | None:
        name = item.get("trait")
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.trait", "change.required", f"{item.get('op')} names a Trait (trait)")
            return None
        found = self.doc["traits"].get(name)
        if not isinstance(found, dict):
            known = ", ".join(self.doc["traits"]) or "none"
            self.issue(f"{path}.trait", "change.unknown", f"unknown Trait {name!r}; Traits are: {known}")
            return None
        return found

    def implementing(self, trait: str) -> list[str]:
        """The Kinds that implement `trait` (by name, as the document stands)."""
        return [
            name
            for name, kind in self.doc["kinds"].items()
            if isinstance(kind, dict) and trait in (kind.get("implements") or [])
        ]

    def _retrait(self, old: str, new: str | None) -> list[str]:
        """`old` renamed to `new` (None: removed) in Kinds' `implements` and lenses' `traits`; the
        Kinds it reached."""

        def swap(names: list[Any]) -> list[Any]:
            return [name if name != old else new for name in names if name != old or new is not None]

        kinds = self.implementing(old)
        for name in kinds:
            self.doc["kinds"][name]["implements"] = swap(self.doc["kinds"][name]["implements"])
        for name, lens in self.doc["lenses"].items():
            traits = lens.get("traits") if isinstance(lens, dict) else None
            if isinstance(traits, list) and old in traits:
                lens["traits"] = swap(traits)
                self.touches["lenses"].add(name)
        return kinds

    def _add_trait(self, item: Mapping[str, Any], path: str) -> None:
        name = item.get("trait")
        definition = self.definition(item, path)
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.trait", "change.required", "add_trait names the Trait (trait)")
            return
        if definition is None:
            return
        if name in self.doc["traits"]:
            self.issue(
                f"{path}.trait", "change.exists", f"Trait {name!r} exists already; change_trait changes it"
            )
            return
        self.doc["traits"][name] = definition
        self.added_traits.add(name)
        self.summary.append({"op": "add_trait", "target": name})

    def _rename_trait(self, item: Mapping[str, Any], path: str) -> None:
        if self.trait(item, path) is None:
            return
        old = item["trait"]
        new = self.new_name(item, path, self.doc["traits"], "Trait")
        if new is None:
            return
        self.doc["traits"] = {new if n == old else n: t for n, t in self.doc["traits"].items()}
        kinds = self._retrait(old, new)
        if old in self.added_traits:
            self.added_traits = {new if t == old else t for t in self.added_traits}
        else:
            original = next((o for o, n in self.renamed_traits.items() if n == old), old)
            self.renamed_traits[original] = new
        self.summary.append({"op": "rename_trait", "target": old, "to": new, "kinds": kinds})

    def _change_trait(self, item: Mapping[str, Any], path: str) -> None:
        trait = self.trait(item, path)
        definition = self.definition(item, path)
        if trait is None or definition is None:
            return
        for member, value in definition.items():
            if member not in _TRAIT_MEMBERS:
                self.issue(
                    f"{path}.definition.{member}",
                    "change.member",
                    f"change_trait sets {', '.join(_TRAIT_MEMBERS)}; {member!r} is not a member of a Trait",
                )
                continue
            trait[member] = value
        self.summary.append(
            {
                "op": "change_trait",
                "target": item["trait"],
                "members": sorted(definition),
                "kinds": self.implementing(item["trait"]),
            }
        )

    def _remove_trait(self, item: Mapping[str, Any], path: str) -> None:
        if self.trait(item, path) is None:
            return
        name = item["trait"]
        del self.doc["traits"][name]
        kinds = self._retrait(name, None)
        original = next((o for o, n in self.renamed_traits.items() if n == name), name)
        self.renamed_traits.pop(original, None)
        self.added_traits.discard(name)
        self.summary.append({"op": "remove_trait", "target": name, "kinds": kinds})
