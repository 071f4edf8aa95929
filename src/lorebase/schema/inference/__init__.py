"""A schema proposed from samples of data, model-free and deterministic (docs/schema.md, "Onboarding").

`read_samples` turns a file's text into samples (one per Kind): CSV (one Kind, named after the
file), JSON (a list of objects; an object whose members are lists of objects, one Kind each; or the
import format `{"records": [{"kind", "values"}]}`) and JSON Lines (one object per line, the same
shapes). `infer` proposes, from the samples:

- a Kind per sample, named in the schema's grammar (`purchase_orders` -> `PurchaseOrder`), its
  Attributes named likewise (`Legal Name` -> `legal_name`), in the order of the sample's columns;
- each Attribute's type from all of its values: boolean, integer, `decimal(p,s)` (s the most
  fraction digits seen, p four integer digits wider than the widest value), date, datetime (with an offset), text (long or multi-line), an enum
  (few distinct words, each repeated), else string; `required` when no row lacks it;
- the key: the first column whose values are all present and distinct, preferring one named like
  an identifier (`id`, `code`, `key`, `number`, `<kind>_id`...), with a `pattern` when every value
  of ten or more has one shape (`S-1001` -> `^S-[0-9]{4}$`); the title: the first column named like a name;
- candidate Relations: a column of one Kind whose values are all keys of another Kind (a foreign
  key), as a many-to-one Relation; columns of two Kinds sharing most of their values are named in
  `notes` only (they may be a Relation, or one vocabulary).

The answer is a change set to review (`add_kind`, then `add_relation`), never an applied schema, and
the same samples always give the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorebase.schema.inference.samples import Sample, SampleError, read_samples, table_sample
from lorebase.schema.inference.values import (
    Column,
    attribute_name,
    definition_of,
    kind_name,
    pattern_of,
    text_of,
)

__all__ = [
    "Inference",
    "Sample",
    "SampleError",
    "attribute_name",
    "infer",
    "kind_name",
    "read_samples",
    "table_sample",
]

_IDENTIFIER = re.compile(r"^(id|key|code|number|no|ref|sku|uuid)\Z|_(id|key|code|number|no|ref)\Z")
_TITLE = re.compile(r"^(name|title|label|legal_name|full_name|display_name)\Z|_name\Z")


@dataclass
class Inference:
    changes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {"changes": self.changes, "notes": self.notes}


# -- the proposal ------------------------------------------------------------------------------------


def _columns(sample: Sample) -> list[Column]:
    names: dict[str, None] = {}
    for row in sample.rows:
        for column in row:
            names.setdefault(column, None)
    columns, taken = [], set()
    for name in names:
        attribute = attribute_name(name)
        while attribute in taken:
            attribute += "_2"
        taken.add(attribute)
        present = [row[name] for row in sample.rows if row.get(name) not in (None, "")]
        columns.append(Column(name, attribute, present, len(sample.rows) - len(present)))
    return columns


def _key(kind: str, columns: list[Column], rows: int) -> Column | None:
    candidates = [
        c
        for c in columns
        if c.missing == 0 and rows > 0 and len(set(c.texts)) == rows and not any("|" in t for t in c.texts)
    ]
    own = {f"{attribute_name(kind)}_{suffix}" for suffix in ("id", "key", "code", "number", "no")}
    for test in (
        lambda c: c.attribute in own,
        lambda c: bool(_IDENTIFIER.search(c.attribute)),
        lambda c: True,
    ):
        for column in candidates:
            if test(column):
                return column
    return None


def infer(samples: Sequence[Sample]) -> Inference:
    """The change set proposed for these samples (module docstring)."""
    out = Inference()
    kinds: dict[str, tuple[list[Column], Column | None]] = {}
    for sample in samples:
        if sample.relation:
            continue
        name = kind_name(sample.name)
        while name in kinds:
            name += "2"
        columns = _columns(sample)
        if not columns:
            out.notes.append(f"{sample.name}: no columns; no Kind proposed")
            continue
        declared = [c for c in columns if c.name in sample.key]
        key = declared[0] if len(declared) == 1 else _key(name, columns, len(sample.rows))
        kinds[name] = (columns, key)
        attributes: dict[str, Any] = {}
        for column in columns:
            definition = definition_of(column)
            if column.name in sample.types and definition["type"] != "enum":
                definition = dict(sample.types[column.name])
            elif column.name in sample.types and sample.types[column.name].get("required"):
                definition["required"] = True
            if column is key:
                definition["required"] = True
                if definition["type"] == "enum":
                    definition = {"type": "string", "required": True}
                if definition["type"] == "string" and (pattern := pattern_of(column.texts)):
                    definition["pattern"] = pattern
            attributes[column.attribute] = definition
            if column.attribute != column.name:
                out.notes.append(f"{name}.{column.attribute} is the column {column.name!r}")
        if key is None:
            key = columns[0]
            attributes[key.attribute]["required"] = True
            out.notes.append(
                f"{name}: no column is present and distinct in every row; {key.attribute} is the key "
                "proposed, but check it (or give a key of several Attributes)"
            )
            kinds[name] = (columns, key)
        title = next(
            (
                c.attribute
                for c in columns
                if _TITLE.search(c.attribute) and attributes[c.attribute]["type"] == "string"
            ),
            None,
        )
        definition = {"key": [key.attribute], "title": title, "attributes": attributes}
        definition["description"] = f"Inferred from {sample.name} ({len(sample.rows)} rows)."
        out.changes.append({"op": "add_kind", "kind": name, "definition": definition})
    linked = [sample for sample in samples if sample.relation]
    out.changes.extend(_linked_relations(kinds, linked, out.notes))
    out.changes.extend(_declared_relations(samples, kinds))
    taken = {c["relation"] for c in out.changes if c["op"] == "add_relation"}
    covered = [
        f"{kind_name(sample.name)}.{attribute_name(column)}"
        for sample in samples
        for column in sample.references
    ]
    out.changes.extend(_relations(kinds, out.notes, taken, covered))
    return out


def _declared_relations(
    samples: Sequence[Sample], kinds: Mapping[str, tuple[list[Column], Column | None]]
) -> list[dict[str, Any]]:
    """Relations from a table's foreign keys (to a table that is sampled too)."""
    names = {sample.name: kind_name(sample.name) for sample in samples if not sample.relation}
    out = []
    for sample in samples:
        for column, table in sample.references.items():
            source, target = names.get(sample.name), names.get(table)
            if source is None or target is None or target not in kinds:
                continue
            stem = re.sub(r"_(id|key|code|number|no|ref)\Z", "", attribute_name(column))
            out.append(
                {
                    "op": "add_relation",
                    "relation": stem if stem != attribute_name(column) else f"{stem}_of",
                    "definition": {
                        "from": source,
                        "to": target,
                        "cardinality": "many_to_one",
                        "description": f"{source}.{attribute_name(column)} references {target} (a foreign key).",
                    },
                }
            )
    return out


def _linked_relations(
    kinds: Mapping[str, tuple[list[Column], Column | None]], samples: list[Sample], notes: list[str]
) -> list[dict[str, Any]]:
    """Relations from samples of Links: each end's Kind is the one whose keys hold every end."""
    keys = {name: set(key.texts) for name, (_, key) in kinds.items() if key is not None}
    out = []
    for sample in samples:
        ends = []
        for end in ("from", "to"):
            held = {text_of(row.get(end)) for row in sample.rows}
            found = [kind for kind, ks in keys.items() if held <= ks]
            ends.append(found[0] if len(found) == 1 else None)
        relation = attribute_name(sample.name)
        if None in ends:
            notes.append(
                f"Links of {sample.name}: no single Kind holds every key of an end; no Relation proposed"
            )
            continue
        per_from: dict[str, int] = {}
        per_to: dict[str, int] = {}
        for row in sample.rows:
            per_from[text_of(row.get("from"))] = per_from.get(text_of(row.get("from")), 0) + 1
            per_to[text_of(row.get("to"))] = per_to.get(text_of(row.get("to")), 0) + 1
        one_from, one_to = max(per_from.values()) <= 1, max(per_to.values()) <= 1
        cardinality = {
            (True, True): "one_to_one",
            (True, False): "many_to_one",
            (False, True): "one_to_many",
            (False, False): "many_to_many",
        }[(one_from, one_to)]
        attributes = {}
        for column in _columns(Sample(sample.name, [dict(row.get("values") or {}) for row in sample.rows])):
            definition = definition_of(column)
            definition.pop("required", None)
            attributes[column.attribute] = definition
        definition = {"from": ends[0], "to": ends[1], "cardinality": cardinality}
        if attributes:
            definition["attributes"] = attributes
        out.append({"op": "add_relation", "relation": relation, "definition": definition})
    return out


def _relations(
    kinds: Mapping[str, tuple[list[Column], Column | None]],
    notes: list[str],
    taken: set[str],
    declared_columns: list[str],
) -> list[dict[str, Any]]:
    """Relations from foreign-key-like columns; columns sharing most values named in `notes`."""
    keys = {name: set(key.texts) for name, (_, key) in kinds.items() if key is not None}
    relations: list[dict[str, Any]] = []
    declared = set(declared_columns)
    for name, (columns, key) in kinds.items():
        for column in columns:
            if column is key or not column.values or f"{name}.{column.attribute}" in declared:
                continue
            values = set(column.texts)
            targets = [other for other, held in keys.items() if other != name and values <= held]
            if len(targets) == 1:
                target = targets[0]
                stem = re.sub(r"_(id|key|code|number|no|ref)\Z", "", column.attribute) or attribute_name(
                    target
                )
                relation = stem if stem != column.attribute else f"{stem}_of"
                while relation in taken:
                    relation += "_2"
                taken.add(relation)
                relations.append(
                    {
                        "op": "add_relation",
                        "relation": relation,
                        "definition": {
                            "from": name,
                            "to": target,
                            "cardinality": "many_to_one",
                            "description": f"{name}.{column.attribute} names a {target} by its key.",
                        },
                    }
                )
                notes.append(
                    f"{name}.{column.attribute} holds keys of {target}: proposed as the Relation {relation} "
                    f"(import its Links from the column, then remove the Attribute if it only said that)"
                )
            elif len(targets) > 1:
                notes.append(
                    f"{name}.{column.attribute} holds keys of {', '.join(targets)}: choose the Relation"
                )
    shared = []
    names = list(kinds)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            for a in kinds[first][0]:
                for b in kinds[second][0]:
                    va, vb = set(a.texts), set(b.texts)
                    if (
                        len(va) >= 2
                        and len(vb) >= 2
                        and a is not kinds[first][1]
                        and b is not kinds[second][1]
                    ):
                        overlap = len(va & vb) / min(len(va), len(vb))
                        if overlap >= 0.8 and a.attribute == b.attribute:
                            shared.append(
                                f"{first}.{a.attribute} and {second}.{b.attribute} share most values"
                            )
    notes.extend(shared)
    return relations
