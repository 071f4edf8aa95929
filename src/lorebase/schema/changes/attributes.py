"""add_attribute, rename_attribute, remove_attribute and change_attribute."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.schema.changes._base import ChangesBase

# Members an Attribute keeps only for some types: dropped when its type changes and they are not given.
_TYPED_MEMBERS = {"values": ("enum",)}
_UNCHANGEABLE = ("derived",)  # and vault (_vault_refusal)


def _vault_refusal(kind: str, name: str, *, into_vault: bool) -> str:
    """Why an existing Attribute's `vault` flag does not change in a change set, and what to do."""
    if into_vault:
        return (
            f"{kind}.{name} cannot move into the vault in a change set: its values are written as they "
            "are in the history of every Revision before the change (and in their ids), which no "
            "migration may rewrite, so an erasure could not reach them. To keep the values in the "
            f"vault from now on: add a new Attribute with vault: true (add_attribute, without a "
            f"backfill), write each Record's value to it with an import or an Operation (they are "
            f"sealed on the way in), then remove {name} (remove_attribute); its earlier values stay "
            "in the history as they were"
        )
    return (
        f"{kind}.{name} cannot leave the vault in a change set: its values are stored only as "
        "references to vault entries, and moving them out would unseal every one in keeper's "
        "migration, whose answer, job row and three-way merges would then hold the values. To keep "
        f"them outside the vault from now on: add a new Attribute without vault (add_attribute), "
        "write each Record's value to it with an import or an Operation (a reader with the "
        f"clearances reads them; a backfill cannot read a vault Attribute), then remove {name} "
        "(remove_attribute); its vault entries stay, and an erasure still erases them"
    )


class AttributeChanges(ChangesBase):
    """The ops on a Kind's Attributes that move or convert the values they hold."""

    def _add_attribute(self, item: Mapping[str, Any], path: str) -> None:
        kind = self.kind(item, path)
        definition = self.definition(item, path)
        name = item.get("attribute")
        if kind is None or definition is None:
            return
        if not isinstance(name, str) or not name:
            self.issue(f"{path}.attribute", "change.required", "add_attribute names the Attribute")
            return
        if name in kind["attributes"]:
            self.issue(f"{path}.attribute", "change.exists", f"{item['kind']}.{name} exists already")
            return
        kind["attributes"][name] = definition
        migration = self.migration(item["kind"])
        migration.removed.discard(name)
        if item.get("backfill") is not None:
            self.backfills[(item["kind"], name)] = (f"{path}.backfill", item["backfill"])
        self.summary.append({"op": "add_attribute", "target": f"{item['kind']}.{name}"})

    def _rename_attribute(self, item: Mapping[str, Any], path: str) -> None:
        found = self.attribute(item, path)
        if found is None:
            return
        kind, old = found
        new = self.new_name(item, path, kind["attributes"], f"{item['kind']} Attribute")
        if new is None:
            return
        kind["attributes"] = {new if n == old else n: a for n, a in kind["attributes"].items()}
        kind["key"] = [new if n == old else n for n in kind.get("key") or []]
        if kind.get("title") == old:
            kind["title"] = new
        migration = self.migration(item["kind"])
        original = next((o for o, n in migration.renamed.items() if n == old), old)
        migration.renamed[original] = new
        if old in migration.computed:
            migration.computed[new] = migration.computed.pop(old)
        if (item["kind"], old) in self.backfills:
            self.backfills[(item["kind"], new)] = self.backfills.pop((item["kind"], old))
        if (item["kind"], old) in self.merges:
            self.merges[(item["kind"], new)] = self.merges.pop((item["kind"], old))
        for name, operation in self.doc["operations"].items():
            for edit in operation.get("edits") or []:
                values = edit.get("values")
                if edit.get("kind") == item["kind"] and isinstance(values, dict) and old in values:
                    edit["values"] = {new if n == old else n: v for n, v in values.items()}
                    self.touches["operations"].add(name)
        self.summary.append({"op": "rename_attribute", "target": f"{item['kind']}.{old}", "to": new})

    def _remove_attribute(self, item: Mapping[str, Any], path: str) -> None:
        found = self.attribute(item, path)
        if found is None:
            return
        kind, name = found
        if name in (kind.get("key") or []):
            self.issue(
                f"{path}.attribute",
                "change.key",
                f"{name} is part of {item['kind']}'s key: a Record's key cannot lose a part",
            )
            return
        self.drop(item["kind"], kind, name)
        self.summary.append({"op": "remove_attribute", "target": f"{item['kind']}.{name}"})

    def drop(self, kind_name: str, kind: dict[str, Any], name: str) -> str:
        """Remove the Attribute `name` of the Kind and its values; its name before the change set."""
        del kind["attributes"][name]
        migration = self.migration(kind_name)
        original = next((o for o, n in migration.renamed.items() if n == name), name)
        migration.renamed.pop(original, None)
        migration.removed.add(original)
        migration.converted.pop(name, None)
        migration.backfills.pop(name, None)
        migration.computed.pop(name, None)
        self.backfills.pop((kind_name, name), None)
        self.merges.pop((kind_name, name), None)
        if kind.get("title") == name:
            kind["title"] = None
        return original

    def _change_attribute(self, item: Mapping[str, Any], path: str) -> None:
        found = self.attribute(item, path)
        definition = self.definition(item, path)
        if found is None or definition is None:
            return
        kind, name = found
        attribute = kind["attributes"][name]
        if "vault" in definition and bool(definition["vault"]) != bool(attribute.get("vault")):
            self.issue(
                f"{path}.definition.vault",
                "change.vault",
                _vault_refusal(item["kind"], name, into_vault=bool(definition["vault"])),
            )
            return
        for member in _UNCHANGEABLE:
            if member in definition and definition[member] != attribute.get(member):
                self.issue(
                    f"{path}.definition.{member}",
                    "change.member",
                    f"{member} cannot change on an existing Attribute (its values are computed from its "
                    "Derivation); add a new Attribute instead and write the values to it",
                )
                return
        if "sensitivity" in definition:
            tags = definition["sensitivity"] if isinstance(definition["sensitivity"], list) else []
            self.weaken(
                f"{item['kind']}.{name}",
                "sensitivity",
                [t for t in attribute.get("sensitivity") or [] if t not in tags],
                "no longer needed to read its values: every reader of "
                f"{item['kind']} on the branch reads them",
            )
        old_type = attribute.get("type")
        if "value_aliases" in definition:
            aliases = self.value_aliases(attribute, definition, f"{path}.definition.value_aliases")
            if aliases is None:
                return
            definition["value_aliases"] = aliases
        merged = {**attribute, **definition}
        if "type" in definition and definition["type"] != old_type:
            for member, types in _TYPED_MEMBERS.items():
                if member not in definition and str(definition["type"]) not in types:
                    merged.pop(member, None)
        kind["attributes"][name] = merged
        value_map = item.get("map")
        if value_map is not None and not isinstance(value_map, dict):
            self.issue(f"{path}.map", "change.map", "map is an object from old values to new ones")
            value_map = None
        migration = self.migration(item["kind"])
        migration.converted.setdefault(name, {}).update(value_map or {})
        if item.get("backfill") is not None:
            self.backfills[(item["kind"], name)] = (f"{path}.backfill", item["backfill"])
        self.summary.append(
            {"op": "change_attribute", "target": f"{item['kind']}.{name}", "members": sorted(definition)}
        )

    def value_aliases(
        self, attribute: dict[str, Any], definition: dict[str, Any], path: str
    ) -> dict[str, Any] | None:
        """The Attribute's value_aliases with the change's merged in: each stored value it names takes
        the words given (none: `[]` or null), the others keep theirs."""
        given = definition["value_aliases"]
        if given is None:
            return {}
        if not isinstance(given, dict):
            self.issue(path, "change.value_aliases", "value_aliases is an object: stored value -> words")
            return None
        values = definition.get("values", attribute.get("values"))
        enum = definition.get("type", attribute.get("type")) == "enum"
        unknown = [v for v in given if enum and isinstance(values, list) and v not in values]
        for value in unknown:
            self.issue(
                f"{path}.{value}",
                "change.value_aliases",
                f"{value!r} is not one of the enum's values ({', '.join(map(str, values or []))}); "
                "aliases belong to a stored value",
            )
        if unknown:
            return None
        merged = dict(attribute.get("value_aliases") or {})
        for value, words in given.items():
            if words:
                merged[value] = words
            else:
                merged.pop(value, None)
        return merged
