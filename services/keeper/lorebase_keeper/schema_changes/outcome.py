"""What a migration of a change set finds and writes, as its commit needs them once the rows are
staged: `Checked` (the violations, the values `on_invalid: clear` cleared, the names before renames
and the unique values; what a migration in a process of its own sends back), `Migration` (its
outcome: the change set over the new schema, the deletions it adds, the Records and Links moved to
a new name, and the provenance a renamed value or a moved row keeps) and `Writes` (the change set's
`writes`: values written and derived values changed per `Kind.Attribute`, with a sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorebase.schema import DomainSchema
from lorebase_keeper.writes import Change, ChangeSet
from lorebase_store import LinkRow, RecordRow

MAX_VIOLATIONS = 1000
SAMPLE = 20  # values written (and derived values changed) a change set's answer shows


@dataclass
class Checked:
    """What a migration found that its commit still needs once its rows are staged: the violations,
    the values on_invalid: clear cleared, the names before renames and the unique values (the
    catch-up checks those written meanwhile against them). A migration in a process of its own
    (process.py) sends back this much (`document`), not its Records."""

    violations: list[dict[str, Any]] = field(default_factory=list)
    violation_count: int = 0
    # Values cleared by on_invalid: clear, as violations would name them (the first MAX_VIOLATIONS).
    cleared: list[dict[str, Any]] = field(default_factory=list)
    # (entity, new name) -> the name before the change set, of a renamed Kind or Relation.
    sources: dict[tuple[str, str], str] = field(default_factory=dict)
    # Kind -> unique Attribute -> value -> the keys holding it after the migration.
    unique: dict[str, dict[str, dict[Any, list[str]]]] = field(default_factory=dict)

    def violate(self, **violation: Any) -> None:
        self.violation_count += 1
        if len(self.violations) < MAX_VIOLATIONS:
            self.violations.append(violation)

    def clear(self, **violation: Any) -> None:
        """A value on_invalid: clear cleared instead of a violation."""
        if len(self.cleared) < MAX_VIOLATIONS:
            self.cleared.append(violation)

    def document(self) -> dict[str, Any]:
        """As JSON: the names as [entity, name, source], the unique values as [value, keys] pairs
        (a value need not be a string)."""
        return {
            "violations": self.violations,
            "violation_count": self.violation_count,
            "cleared": self.cleared,
            "sources": [[entity, name, source] for (entity, name), source in self.sources.items()],
            "unique": {
                kind: {
                    name: [[value, keys] for value, keys in holders.items()]
                    for name, holders in attributes.items()
                }
                for kind, attributes in self.unique.items()
            },
        }

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> Checked:
        return cls(
            document["violations"],
            document["violation_count"],
            document["cleared"],
            {(entity, name): source for entity, name, source in document["sources"]},
            {
                kind: {name: {value: keys for value, keys in holders} for name, holders in attributes.items()}
                for kind, attributes in document["unique"].items()
            },
        )


@dataclass(kw_only=True)
class Migration(Checked):
    """The migration's outcome: the change set over the new schema, the deletions it adds, and
    every violation found."""

    changes: ChangeSet
    deletions: list[Change] = field(default_factory=list)
    deleted_records: dict[tuple[str, str], RecordRow] = field(default_factory=dict)
    deleted_links: dict[tuple[str, str, str], LinkRow] = field(default_factory=dict)
    # Kind -> old name -> new name, for provenance.
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)
    # Records and Links moved to a new Kind or Relation name: (new name, key...) -> the row moved.
    moved_records: dict[tuple[str, str], RecordRow] = field(default_factory=dict)
    moved_links: dict[tuple[str, str, str], LinkRow] = field(default_factory=dict)

    def provenance_of(self, change: Change, provenance: dict[str, Any], revision: str) -> dict[str, Any]:
        """A renamed value keeps the provenance it had under its old name; a moved Record or Link
        keeps its own, and its history row names where it came from."""
        if change.entity == "record" and (change.name, change.key) in self.moved_records:
            moved = self.moved_records[(change.name, change.key)]
            return self._moved(moved.values, moved.provenance, change, revision)
        if change.entity == "link":
            from_key, _, to_key = change.key.partition("->")
            link = self.moved_links.get((change.name, from_key, to_key))
            if link is not None:
                kept = self._moved(link.values, link.provenance, change, revision)
                return {**kept, "$link": link.provenance.get("$link", revision)}
        renamed = self.renamed.get(change.name) if change.entity == "record" else None
        if not renamed or change.before is None:
            return provenance
        state = self.changes.records.get((change.name, change.key))
        before = None if state is None or state.before is None else state.before.provenance
        if not before:
            return provenance
        for old, new in renamed.items():
            if old in before and change.after is not None and new in change.after:
                provenance[new] = before[old]
        return provenance

    def writes(self, changes: list[Change], schema: DomainSchema) -> dict[str, Any]:
        """What the migration writes (SchemaWrites): values written and derived values changed, per
        `Kind.Attribute`, with the first SAMPLE of each; values a rename moved are not writes."""
        out = Writes()
        for change in changes:
            for entry in self.contributions(change, schema):
                out.add(*entry)
        return out.document()

    def contributions(self, change: Change, schema: DomainSchema) -> list[Contribution]:
        """What one change counts in `writes`: (counts or derived, `Kind.Attribute`, its sample), or
        for a Link's values (converted or dropped), (counts, `Relation.attribute`, its sample)."""
        if change.entity == "link":
            return self._link_contributions(change, schema)
        kind = schema.kinds.get(change.name)
        if change.entity != "record" or change.after is None or kind is None:
            return []
        out: list[Contribution] = []
        renamed = self.renamed.get(change.name, {})  # old -> new
        moved = self.moved_records.get((change.name, change.key))
        held = moved.values if moved is not None else (change.before or {})
        before = {n: v for n, v in held.items() if n not in renamed}
        before.update({renamed[n]: v for n, v in held.items() if n in renamed})
        names = list(change.after) if moved is not None else change.attributes
        for name in names:
            if name in renamed and name not in kind.attributes:
                continue  # the old name of a moved value
            value, was = change.after.get(name), before.get(name)
            if value == was:
                continue
            attribute = kind.attributes.get(name)
            derived = attribute is not None and attribute.derived is not None
            sample = {"ref": change.ref, "attribute": name, "before": was, "after": value}
            out.append(("derived" if derived else "counts", f"{change.name}.{name}", sample))
        return out

    def _link_contributions(self, change: Change, schema: DomainSchema) -> list[Contribution]:
        if change.after is None or change.name not in schema.relations:
            return []
        from_key, _, to_key = change.key.partition("->")
        moved = self.moved_links.get((change.name, from_key, to_key))  # a renamed Relation's: moved as is
        before = moved.values if moved is not None else (change.before or {})
        out: list[Contribution] = []
        for name in list(change.after) if moved is not None else change.attributes:
            value, was = change.after.get(name), before.get(name)
            if value != was:
                sample = {"ref": change.ref, "attribute": name, "before": was, "after": value}
                out.append(("counts", f"{change.name}.{name}", sample))
        return out

    def _moved(
        self, values: dict[str, Any], kept: dict[str, Any], change: Change, revision: str
    ) -> dict[str, Any]:
        """The provenance of a moved row: each value as it was keeps its entry (under its new name);
        a value the migration wrote names this Revision."""
        source = self.sources.get((change.entity, change.name), change.name)
        renamed = self.renamed.get(change.name, {}) if change.entity == "record" else {}
        old_names = {new: old for old, new in renamed.items()}
        out: dict[str, Any] = {}
        for name, value in (change.after or {}).items():
            old = old_names.get(name, name)
            entry = kept.get(old)
            out[name] = entry if entry is not None and values.get(old) == value else revision
        for note in ("$via", "$evidence"):
            if kept.get(note):
                out[note] = kept[note]
        out["$renamed_from"] = source
        return out


# One value a change writes: ("counts" or "derived", "Kind.Attribute", its sample entry).
Contribution = tuple[str, str, dict[str, Any]]


@dataclass
class Writes:
    """A change set's `writes` summed up change by change, keeping the first `keep` samples of each
    kind (more than SAMPLE when a catch-up may take some back: `remove`)."""

    keep: int = SAMPLE
    counts: dict[str, int] = field(default_factory=dict)
    derived: dict[str, int] = field(default_factory=dict)
    sample: list[dict[str, Any]] = field(default_factory=list)
    derived_sample: list[dict[str, Any]] = field(default_factory=list)

    def add(self, bucket: str, label: str, sample: dict[str, Any]) -> None:
        counts, samples = (
            (self.derived, self.derived_sample) if bucket == "derived" else (self.counts, self.sample)
        )
        counts[label] = counts.get(label, 0) + 1
        if len(samples) < self.keep:
            samples.append(sample)

    def copy(self) -> Writes:
        return Writes(
            self.keep, dict(self.counts), dict(self.derived), list(self.sample), list(self.derived_sample)
        )

    def remove(self, contributions: list[Any]) -> None:
        """Take back what changes counted (those a catch-up migrated again): Contributions, or
        their JSON (lists)."""
        refs: set[str] = set()
        for bucket, label, sample in contributions:
            counts = self.derived if bucket == "derived" else self.counts
            counts[label] -= 1
            if not counts[label]:
                del counts[label]
            refs.add(sample["ref"])
        self.sample = [s for s in self.sample if s["ref"] not in refs]
        self.derived_sample = [s for s in self.derived_sample if s["ref"] not in refs]

    def document(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "derived": dict(self.derived),
            "sample": self.sample[:SAMPLE],
            "derived_sample": self.derived_sample[:SAMPLE],
        }


__all__ = [
    "MAX_VIOLATIONS",
    "SAMPLE",
    "Checked",
    "Contribution",
    "Migration",
    "Writes",
]
