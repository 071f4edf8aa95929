"""Values a change set computes: backfills (add_attribute, change_attribute), split_attribute and
merge_attributes, compiled once the new schema has loaded.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.schema._attributes import read_attributes
from lorebase.schema._reader import Problems
from lorebase.schema.changes.attributes import AttributeChanges
from lorebase.schema.changes.plan import Backfill, Computed
from lorebase.schema.derivations import DerivationError, compile_derivation
from lorebase.schema.model import DomainSchema

_VAULT_WRITES = (
    "a change set computes values in keeper's migration, where nothing seals them: they would be "
    "stored as they are, outside the vault, where an erasure cannot reach them"
)


class BackfillChanges(AttributeChanges):
    """Splits and merges of Attributes, and the backfills and expressions compiled against the new
    schema."""

    def source(self, kind: dict[str, Any], kind_name: str, name: str, path: str) -> bool:
        """Whether the Attribute may be split or merged away (not a key, derived or vault one)."""
        attribute = kind["attributes"][name]
        why = (
            "is new in this change set (a split or a merge reads the values before it): split or "
            "merge it in a change set of its own"
            if not self.existed(kind_name, name)
            else "is part of the key: a Record's key cannot change"
            if name in (kind.get("key") or [])
            else "is derived: its values are computed from its Derivation"
            if isinstance(attribute, dict) and attribute.get("derived")
            else "keeps its values in the vault, which a split or a merge would move out of it"
            if isinstance(attribute, dict) and attribute.get("vault")
            else ""
        )
        if why:
            self.issue(path, "change.source", f"{kind_name}.{name} {why}; choose another Attribute")
        return not why

    def existed(self, kind_name: str, name: str) -> bool:
        """Whether the Attribute holds values from before the change set (not added or computed in it)."""
        if (
            kind_name in self.added_kinds
            or (kind_name, name) in self.backfills
            or (kind_name, name) in self.merges
        ):
            return False
        migration = self.migration(kind_name)
        if name in migration.computed:
            return False
        kind = next((o for o, n in self.renamed_kinds.items() if n == kind_name), kind_name)
        original = next((o for o, n in migration.renamed.items() if n == name), name)
        return original in ((self.start.get(kind) or {}).get("attributes") or {})

    def _split_attribute(self, item: Mapping[str, Any], path: str) -> None:
        found = self.attribute(item, path)
        if found is None:
            return
        kind, name = found
        kind_name = item["kind"]
        if not self.source(kind, kind_name, name, f"{path}.attribute"):
            return
        into = item.get("into")
        if not isinstance(into, dict) or not into:
            self.issue(
                f"{path}.into",
                "change.required",
                "split_attribute needs into: the new Attributes, name -> definition, one per named group "
                "of the pattern",
            )
            return
        try:
            pattern = re.compile(str(item.get("pattern") or ""))
        except re.error as error:
            self.issue(f"{path}.pattern", "change.pattern", f"not a regular expression: {error}")
            return
        groups = list(pattern.groupindex)
        if not groups:
            self.issue(
                f"{path}.pattern",
                "change.required",
                "split_attribute needs a pattern with a named group per new Attribute, "
                "e.g. '(?P<city>[^,]+), (?P<country>[A-Z]{2})'",
            )
            return
        problems = len(self.issues)
        for group in groups:
            if group not in into:
                self.issue(
                    f"{path}.pattern",
                    "change.split",
                    f"the group {group!r} names no Attribute of into; add it to into or rename the group",
                )
        for target, definition in into.items():
            where = f"{path}.into.{target}"
            if target not in groups:
                self.issue(
                    where, "change.split", f"the pattern has no group named {target!r}: add (?P<{target}>...)"
                )
            elif not isinstance(definition, dict):
                self.issue(where, "change.required", "a new Attribute's definition is an object")
            elif definition.get("vault"):
                self.issue(
                    f"{where}.vault",
                    "change.vault",
                    f"{kind_name}.{target} cannot be a vault Attribute made by split_attribute: "
                    f"{_VAULT_WRITES}. Split into Attributes without vault, or write the vault values "
                    "with an import or an Operation",
                )
            elif target in kind["attributes"] and target != name:
                self.issue(
                    where, "change.exists", f"{kind_name}.{target} exists already; choose another name"
                )
        if len(self.issues) > problems:
            return
        title = kind.get("title")
        original = self.drop(kind_name, kind, name)
        migration = self.migration(kind_name)
        for target, definition in into.items():
            kind["attributes"][target] = copy.deepcopy(definition)
            migration.computed[target] = Computed(((name, original),), pattern=pattern, group=target)
        if title == name and name in into:  # split into itself and more: still the title
            kind["title"] = title
        self.summary.append({"op": "split_attribute", "target": f"{kind_name}.{name}", "into": list(into)})

    def _merge_attributes(self, item: Mapping[str, Any], path: str) -> None:
        kind = self.kind(item, path)
        definition = self.definition(item, path)
        if kind is None or definition is None:
            return
        kind_name = item["kind"]
        names = item.get("attributes")
        if not isinstance(names, list) or len(names) < 2 or len(set(map(str, names))) != len(names):
            self.issue(
                f"{path}.attributes",
                "change.required",
                "merge_attributes names two or more Attributes to merge",
            )
            return
        problems = len(self.issues)
        for index, name in enumerate(names):
            where = f"{path}.attributes[{index}]"
            if name not in kind["attributes"]:
                known = ", ".join(kind["attributes"])
                self.issue(
                    where,
                    "change.unknown",
                    f"{kind_name} has no Attribute {name!r}; its Attributes are: {known}",
                )
            else:
                self.source(kind, kind_name, name, where)
        to = item.get("to")
        if not isinstance(to, str) or not to:
            self.issue(f"{path}.to", "change.required", "merge_attributes names the new Attribute (to)")
        elif to in kind["attributes"] and to not in names:
            self.issue(f"{path}.to", "change.exists", f"{kind_name}.{to} exists already; choose another name")
        backfill = item.get("backfill")
        if not isinstance(backfill, dict) or not isinstance(backfill.get("expression"), str):
            self.issue(
                f"{path}.backfill",
                "change.required",
                'merge_attributes needs backfill: {"expression": "..."} over the merged Attributes '
                "(e.g. \"first_name + ' ' + last_name\")",
            )
        if len(self.issues) > problems:
            return
        assert isinstance(to, str)
        sources = {name: copy.deepcopy(kind["attributes"][name]) for name in names}
        title = kind.get("title")
        reads = {name: self.drop(kind_name, kind, name) for name in names}
        kind["attributes"][to] = definition
        if title == to:  # merged into the title's name: still the title
            kind["title"] = title
        self.merges[(kind_name, to)] = (f"{path}.backfill", backfill, reads, sources)
        self.summary.append(
            {"op": "merge_attributes", "target": f"{kind_name}.{to}", "attributes": list(names)}
        )

    def compile_backfills(self, schema: DomainSchema) -> None:
        for (kind_name, name), (path, spec) in self.backfills.items():
            kind = schema.kinds.get(kind_name)
            if kind is None or name not in kind.attributes:
                continue
            attribute = kind.attributes[name]
            if attribute.vault:
                self.issue(
                    path,
                    "backfill.vault",
                    f"{kind_name}.{name} is a vault Attribute and takes no backfill: {_VAULT_WRITES}. "
                    "Write its values with an import or an Operation instead",
                )
                continue
            if not isinstance(spec, dict) or len([m for m in ("value", "expression") if m in spec]) != 1:
                self.issue(path, "backfill.form", 'a backfill is {"value": ...} or {"expression": "..."}')
                continue
            if "value" in spec:
                try:
                    value = canonical_value(attribute, spec["value"])
                except ValueProblem as problem:
                    self.issue(f"{path}.value", problem.rule, problem.message)
                    continue
                self.migration(kind_name).backfills[name] = Backfill(value=value)
                continue
            try:
                compiled = compile_derivation(spec["expression"], attribute, kind, schema.kinds, {})
            except DerivationError as error:
                self.issue(
                    f"{path}.expression",
                    "backfill.expression",
                    f"{error} (a backfill reads the Record's own values; it aggregates over no Relation)",
                )
                continue
            self.migration(kind_name).backfills[name] = Backfill(expression=compiled)
        for (kind_name, name), (path, spec, reads, sources) in self.merges.items():
            kind = schema.kinds.get(kind_name)
            if kind is None or name not in kind.attributes:
                continue
            if kind.attributes[name].vault:
                self.issue(
                    path.removesuffix(".backfill") + ".definition.vault",
                    "change.vault",
                    f"{kind_name}.{name} cannot be a vault Attribute made by merge_attributes: "
                    f"{_VAULT_WRITES}. Merge into an Attribute without vault, or write the vault "
                    "values with an import or an Operation",
                )
                continue
            problems = Problems()
            read = read_attributes(sources, path, problems)
            if problems:  # a Kind's own Attributes, loaded before: not expected
                continue
            reading = dataclasses.replace(kind, attributes={**kind.attributes, **read})
            try:
                compiled = compile_derivation(
                    spec["expression"], kind.attributes[name], reading, schema.kinds, {}
                )
            except DerivationError as error:
                self.issue(
                    f"{path}.expression",
                    "backfill.expression",
                    f"{error} (a merge's expression reads the merged Attributes and the Record's other "
                    "values; it aggregates over no Relation)",
                )
                continue
            computed = Computed(tuple(reads.items()), backfill=Backfill(expression=compiled))
            self.migration(kind_name).computed[name] = computed
