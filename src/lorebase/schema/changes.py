"""Schema change sets: a list of changes applied to a schema document, and what they ask of the data.

A change set (docs/schema.md, "Changing a schema") is a list of items, each with an `op`:

| op | members | what it does to the document | what it asks of the data |
| --- | --- | --- | --- |
| add_kind | kind, definition | adds the Kind | nothing |
| rename_kind | kind, to | renames it, and in Relations' ends, lenses, Operations' edits and Sources | each Record moves to the new name with its key, values, provenance and creation |
| change_kind | kind, definition | sets description, title, aliases, stewards | nothing |
| remove_kind | kind, delete_data | removes the Kind | its Records deleted (only with `delete_data`) |
| add_attribute | kind, attribute, definition, backfill | adds the Attribute | the backfill written |
| rename_attribute | kind, attribute, to | renames it, and in the Kind's key, title and the Operations writing it | each value moved, with its provenance |
| remove_attribute | kind, attribute | removes it | its values dropped |
| change_attribute | kind, attribute, definition, map | merges the members (type, values, bounds, pattern, required, unique, aliases, value_aliases...) | each value converted (through `map` first), or reported |
| add_relation | relation, definition | adds the Relation | nothing |
| change_relation | relation, definition, map | sets description, cardinality, required_from, attributes (link Attributes) | its Links checked again (cardinality, required_from), their values converted to the link Attributes (through `map` first) or reported, dropped link values removed |
| rename_relation | relation, to, inverse | renames it (and its inverse when given), and in lenses and Operations' edits | each Link moves to the new name with its values and provenance |
| remove_relation | relation, delete_data | removes it | its Links deleted (only with `delete_data`) |
| put_operation / remove_operation | operation, definition | sets or removes an Operation | nothing |
| put_lens / remove_lens | lens, definition | sets or removes a lens | nothing |
| add_trait | trait, definition | adds the Trait | nothing |
| rename_trait | trait, to | renames it, and in Kinds' `implements` and lenses' `traits` | nothing |
| change_trait | trait, definition | sets description, attributes (each implementing Kind must still declare them) | nothing |
| remove_trait | trait | removes it, and from Kinds' `implements` (they keep their Attributes) and lenses' `traits` | nothing |
| split_attribute | kind, attribute, pattern, into | removes the Attribute, adds each of `into` | each new value is its named group of `pattern` over the old value |
| merge_attributes | kind, attributes, to, definition, backfill | removes the Attributes, adds `to` | its value is the backfill's expression over the old values |

`apply_changes` checks every item against the document as the items before it left it, then loads
the result (every rule of the schema document holds); every problem comes back at once, by the
item's path (`changes[2].to`). Nothing here reads data: keeper migrates the Records
(lorebase_keeper.schema_changes) with the `Plan`.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorebase.canonical import ValueProblem, canonical_text, canonical_value
from lorebase.schema._attributes import read_attributes
from lorebase.schema._reader import Problems
from lorebase.schema.derivations import Derivation, DerivationError, compile_derivation
from lorebase.schema.errors import SchemaError
from lorebase.schema.loader import load_schema
from lorebase.schema.merge import Renames
from lorebase.schema.model import DomainSchema, Kind

__all__ = [
    "OPS",
    "Backfill",
    "Computed",
    "KindMigration",
    "Plan",
    "SchemaChangeError",
    "apply_changes",
    "kept_items",
    "kept_on_invalid",
    "schema_diff",
    "sent_items",
]

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
_KIND_MEMBERS = ("description", "title", "aliases", "stewards", "implements")
_TRAIT_MEMBERS = ("description", "attributes")
_RELATION_MEMBERS = ("description", "cardinality", "required_from", "attributes")
# Members an Attribute keeps only for some types: dropped when its type changes and they are not given.
_TYPED_MEMBERS = {"values": ("enum",)}
_UNCHANGEABLE = ("derived",)  # and vault (_vault_refusal)
_VAULT_WRITES = (
    "a change set computes values in keeper's migration, where nothing seals them: they would be "
    "stored as they are, outside the vault, where an erasure cannot reach them"
)


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


class _Changes:
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
        name = item.get("relation")
        definition = self.definition(item, path)
        if not isinstance(name, str) or name not in self.doc["relations"]:
            known = ", ".join(self.doc["relations"]) or "none"
            self.issue(
                f"{path}.relation", "change.unknown", f"unknown Relation {name!r}; Relations are: {known}"
            )
            return
        if definition is None:
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
        old = item.get("relation")
        if not isinstance(old, str) or old not in self.doc["relations"]:
            known = ", ".join(self.doc["relations"]) or "none"
            self.issue(
                f"{path}.relation", "change.unknown", f"unknown Relation {old!r}; Relations are: {known}"
            )
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
        name = item.get("relation")
        if not isinstance(name, str) or name not in self.doc["relations"]:
            known = ", ".join(self.doc["relations"]) or "none"
            self.issue(
                f"{path}.relation", "change.unknown", f"unknown Relation {name!r}; Relations are: {known}"
            )
            return
        del self.doc["relations"][name]
        self.changed_relations.pop(name, None)
        self.link_maps.pop(name, None)
        original = next((o for o, n in self.renamed_relations.items() if n == name), name)
        self.renamed_relations.pop(original, None)
        if name not in self.added_relations:
            self.removed_relations[original] = bool(item.get("delete_data"))
        self.summary.append({"op": "remove_relation", "target": name})

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

    # After every item

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


def apply_changes(document: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> Plan:
    """The change set `items` applied to the schema `document`; SchemaChangeError lists every problem."""
    if not items:
        raise SchemaChangeError([{"path": "changes", "rule": "change.required", "message": "no changes"}])
    changes = _Changes(document)
    for index, item in enumerate(items):
        changes.apply(index, item)
    if changes.issues:
        raise SchemaChangeError(changes.issues)
    try:
        schema = load_schema(changes.doc)
    except SchemaError as error:
        raise SchemaChangeError(
            [
                {
                    "path": f"schema.{p['path']}" if p.get("path") else "schema",
                    "rule": "schema.invalid",
                    "message": p["message"],
                }
                for p in _problems(error)
            ]
        ) from None
    changes.compile_backfills(schema)
    if changes.issues:
        raise SchemaChangeError(changes.issues)
    return Plan(
        schema=schema,
        kinds={k: m for k, m in changes.kinds.items() if k in schema.kinds},
        removed_kinds=changes.removed_kinds,
        removed_relations=changes.removed_relations,
        summary=changes.summary,
        touches={k: sorted(v) for k, v in changes.touches.items()},
        renamed_kinds={o: n for o, n in changes.renamed_kinds.items() if o != n and n in schema.kinds},
        renamed_relations={
            o: n for o, n in changes.renamed_relations.items() if o != n and n in schema.relations
        },
        renamed_traits={o: n for o, n in changes.renamed_traits.items() if o != n and n in schema.traits},
        changed_relations={
            n: sorted(m) for n, m in changes.changed_relations.items() if n in schema.relations
        },
        link_maps={n: m for n, m in changes.link_maps.items() if n in changes.changed_relations},
        protection=changes.protection,
    )


def kept_items(items: Sequence[Mapping[str, Any]], on_invalid: str) -> list[dict[str, Any]]:
    """A change set's items as kept with its Revision (schema_change_sets): with `on_invalid: clear`
    each item says so, so a merge replays it the same way (an older keeper ignores the member)."""
    return [{**item, "on_invalid": "clear"} if on_invalid == "clear" else dict(item) for item in items]


def kept_on_invalid(items: Sequence[Mapping[str, Any]]) -> str:
    """How a kept change set treats values that do not fit: `clear` or `refuse`."""
    return "clear" if items and all(item.get("on_invalid") == "clear" for item in items) else "refuse"


def sent_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A kept change set's items as they were sent (without `kept_items`' member)."""
    return [{k: v for k, v in item.items() if k != "on_invalid"} for item in items]


def schema_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[str]]:
    """What changed from one schema document to another: Kinds, Attributes (`Kind.Attribute`),
    Relations, Operations and lenses (`operation:name`, `lens:name`) added, removed or changed."""
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []

    def compare(old: Mapping[str, Any], new: Mapping[str, Any], label: Any) -> None:
        for name in new:
            if name not in old:
                added.append(label(name))
            elif old[name] != new[name]:
                changed.append(label(name))
        removed.extend(label(name) for name in old if name not in new)

    old_kinds, new_kinds = before.get("kinds") or {}, after.get("kinds") or {}
    for name in new_kinds:
        if name not in old_kinds:
            added.append(name)
            continue
        old_kind, new_kind = old_kinds[name], new_kinds[name]
        bare_old = {k: v for k, v in old_kind.items() if k != "attributes"}
        bare_new = {k: v for k, v in new_kind.items() if k != "attributes"}
        if bare_old != bare_new:
            changed.append(name)
        compare(
            old_kind.get("attributes") or {}, new_kind.get("attributes") or {}, lambda a, k=name: f"{k}.{a}"
        )
    removed.extend(name for name in old_kinds if name not in new_kinds)
    compare(before.get("relations") or {}, after.get("relations") or {}, lambda n: n)
    compare(before.get("traits") or {}, after.get("traits") or {}, lambda n: f"trait:{n}")
    compare(before.get("operations") or {}, after.get("operations") or {}, lambda n: f"operation:{n}")
    compare(before.get("lenses") or {}, after.get("lenses") or {}, lambda n: f"lens:{n}")
    compare(before.get("sources") or {}, after.get("sources") or {}, lambda n: f"source:{n}")
    return {"added": added, "removed": removed, "changed": changed}


def _problems(error: SchemaError) -> list[dict[str, str]]:
    out = []
    for problem in error.problems:
        text = str(problem)
        where, sep, message = text.partition(": ")
        out.append({"path": where if sep else "", "message": message if sep else text})
    return out
