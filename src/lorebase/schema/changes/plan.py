"""What a change set asks of the data: the `Plan` `apply_changes` answers, and its parts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value
from lorebase.schema.derivations import Derivation
from lorebase.schema.merge import Renames
from lorebase.schema.model import DomainSchema, Kind


class SchemaChangeError(ValueError):
    """A change set that cannot apply; `issues` lists every problem ({path, rule, message})."""

    def __init__(self, issues: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{i['path']}: {i['message']}" for i in issues))
        self.issues = issues


@dataclass(frozen=True)
class Backfill:
    """The value a new (or converted) Attribute takes on Records without one: a constant, already
    canonical, or an expression over the Record's values (a Derivation without aggregates)."""

    value: Any = None
    expression: Derivation | None = None

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        if self.expression is None:
            return self.value
        return self.expression.evaluate(values, {})


@dataclass(frozen=True)
class Computed:
    """A value a split or a merge of Attributes writes, from values the change set removes: `reads`
    names each (the name the change reads it by, its name before the change set). A split takes the
    group `group` of `pattern` over its one value; a merge evaluates `backfill` over the values."""

    reads: tuple[tuple[str, str], ...]
    backfill: Backfill | None = None
    pattern: re.Pattern[str] | None = None
    group: str = ""

    def evaluate(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Any, str]:
        """The value (a canonical one for a merge, the group's text for a split; None: no value), and
        why it has none when it should ("" when it is fine)."""
        read = {name: before.get(old) for name, old in self.reads}
        if all(value is None for value in read.values()):
            return None, ""
        if self.pattern is not None:
            text = canonical_text(next(iter(read.values())))
            match = self.pattern.fullmatch(text)
            if match is None:
                return None, f"{text!r} does not match the split's pattern {self.pattern.pattern!r}"
            return match.group(self.group), ""
        assert self.backfill is not None and self.backfill.expression is not None
        value = self.backfill.evaluate({**after, **read})
        if value is None:
            return None, f"the merge's expression {self.backfill.expression.source!r} gave no value"
        return value, ""


@dataclass
class KindMigration:
    """What the change set does to the values of one Kind's Records (names are the new ones)."""

    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name
    removed: set[str] = field(default_factory=set)  # old names
    backfills: dict[str, Backfill] = field(default_factory=dict)
    converted: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> value map
    computed: dict[str, Computed] = field(default_factory=dict)  # split or merged Attributes
    # The Kind's name before the change set when a rename_kind renamed it (its Records move).
    renamed_from: str | None = None

    def migrate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values after the renames and removals (conversions and backfills are keeper's: they
        may fail per Record)."""
        out: dict[str, Any] = {}
        for name, value in values.items():
            if name in self.removed:
                continue
            out[self.renamed.get(name, name)] = value
        return out

    def compute(
        self, kind: Kind, before: Mapping[str, Any], out: dict[str, Any]
    ) -> dict[str, tuple[str, str]]:
        """Write the split and merged values into `out` (the migrated values of the Record whose values
        before the change set are `before`); those that fail by name: (rule, message)."""
        failed: dict[str, tuple[str, str]] = {}
        for name, computed in self.computed.items():
            value, why = computed.evaluate(before, out)
            rule = "split.failed" if computed.pattern is not None else "merge.failed"
            if why:
                failed[name] = (rule, why)
                continue
            if value is None:
                out.pop(name, None)
                continue
            try:
                out[name] = canonical_value(kind.attributes[name], value)
            except ValueProblem as problem:
                failed[name] = (problem.rule, f"{problem.message} (the value was {value!r})")
        return failed


@dataclass
class Plan:
    """A change set applied to a document: the new schema and what it asks of the data."""

    schema: DomainSchema
    kinds: dict[str, KindMigration] = field(default_factory=dict)
    removed_kinds: dict[str, bool] = field(default_factory=dict)  # Kind -> delete its Records
    removed_relations: dict[str, bool] = field(default_factory=dict)  # Relation -> delete its Links
    # Attributes of which a value is checked again (converted, or newly required or unique).
    summary: list[dict[str, Any]] = field(default_factory=list)
    # Schema elements a change rewrote besides its own target: Operations, lenses.
    touches: dict[str, list[str]] = field(default_factory=lambda: {"operations": [], "lenses": []})
    renamed_kinds: dict[str, str] = field(default_factory=dict)  # name before -> name after
    renamed_relations: dict[str, str] = field(default_factory=dict)  # name before -> name after
    renamed_traits: dict[str, str] = field(default_factory=dict)  # name before -> name after
    # Relations whose Links are checked again (by name after), with the members the change set set.
    changed_relations: dict[str, list[str]] = field(default_factory=dict)
    # change_relation's `map`: Relation -> link Attribute -> (old value as text -> new value).
    link_maps: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # What weakens the protection of existing values (less sensitivity, fewer stewards): each
    # {target, member, removed, message}, said in the answer.
    protection: list[dict[str, Any]] = field(default_factory=list)

    def migration(self, kind: str) -> KindMigration:
        return self.kinds.setdefault(kind, KindMigration())

    def renames(self) -> Renames:
        """What the change set renamed, by the names before it (for the three-way schema merge)."""
        back = {new: old for old, new in self.renamed_kinds.items()}
        attributes = {
            (back.get(kind, kind), old): new
            for kind, migration in self.kinds.items()
            for old, new in migration.renamed.items()
            if old != new
        }
        return Renames(
            dict(self.renamed_kinds), dict(self.renamed_relations), attributes, dict(self.renamed_traits)
        )
