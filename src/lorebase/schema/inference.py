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

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Inference", "Sample", "SampleError", "infer", "kind_name", "read_samples", "table_sample"]

ENUM_MAX_VALUES = 12  # an enum has at most this many distinct values...
ENUM_MIN_ROWS = 6  # ...in a sample of at least this many values, each value seen twice on average
TEXT_MIN_LENGTH = 200  # a string this long (or with a line break) is text
PATTERN_MIN_VALUES = 10  # a key's pattern is proposed from at least this many values
DECIMAL_HEADROOM = 4  # integer digits a decimal type has beyond the widest value of the sample
_IDENTIFIER = re.compile(r"^(id|key|code|number|no|ref|sku|uuid)$|_(id|key|code|number|no|ref)$")
_TITLE = re.compile(r"^(name|title|label|legal_name|full_name|display_name)$|_name$")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_DECIMAL = re.compile(r"^[+-]?([0-9]+)\.([0-9]+)$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$")


class SampleError(ValueError):
    """A file that holds no sample this module can read (the message says what it expects)."""


@dataclass(frozen=True)
class Sample:
    """The rows of one Kind as read: column name -> value (None or "" for no value). A sample of
    Links (the import format's `links`) has `relation` set and rows of `from`, `to` and `values`.
    A table's sample also says what its catalog declares (`table_sample`): types, the primary key
    and foreign keys (column -> the table it references), which win over what the values suggest."""

    name: str
    rows: list[dict[str, Any]]
    relation: bool = False
    types: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    key: tuple[str, ...] = ()
    references: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Inference:
    changes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {"changes": self.changes, "notes": self.notes}


# -- reading -----------------------------------------------------------------------------------------


def read_samples(name: str, text: str) -> list[Sample]:
    """The samples of a file: by its extension (.csv, .json, .jsonl / .ndjson), its stem naming the
    Kind where the file does not."""
    stem = re.split(r"[\\/]", name)[-1].rsplit(".", 1)[0]
    lower = name.lower()
    if lower.endswith(".csv") or lower.endswith(".tsv"):
        reader = csv.DictReader(io.StringIO(text), delimiter="\t" if lower.endswith(".tsv") else ",")
        if not reader.fieldnames:
            raise SampleError(f"{name}: a CSV file starts with a header row naming its columns")
        return [Sample(stem, [dict(row) for row in reader])]
    if lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise SampleError(f"{name}:{number}: not JSON ({exc.msg})") from None
        return _from_json(stem, rows, name)
    if lower.endswith(".json"):
        try:
            return _from_json(stem, json.loads(text), name)
        except json.JSONDecodeError as exc:
            raise SampleError(f"{name}: not JSON ({exc.msg} at line {exc.lineno})") from None
    raise SampleError(f"{name}: give a .csv, .tsv, .json, .jsonl or .ndjson file")


def _from_json(stem: str, data: Any, name: str) -> list[Sample]:
    if isinstance(data, dict) and isinstance(data.get("records"), list):  # the import format
        links: dict[str, list[dict[str, Any]]] = {}
        for link in data.get("links") or []:
            if isinstance(link, dict) and isinstance(link.get("relation"), str):
                links.setdefault(link["relation"], []).append(link)
        samples = _from_json(stem, data["records"], name)
        return samples + [Sample(relation, rows, relation=True) for relation, rows in links.items()]
    if isinstance(data, list) and data and all(_imported(item) for item in data):
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for item in data:
            by_kind.setdefault(item["kind"], []).append(dict(item["values"]))
        return [Sample(kind, rows) for kind, rows in by_kind.items()]
    if isinstance(data, list) and all(isinstance(item, dict) for item in data):
        return [Sample(stem, [dict(item) for item in data])]
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        samples = []
        for member, rows in data.items():
            if not all(isinstance(row, dict) for row in rows):
                raise SampleError(f"{name}: {member} is a list of objects (one per Record)")
            samples.append(Sample(member, [dict(row) for row in rows]))
        return samples
    raise SampleError(
        f"{name}: give a list of objects, an object of lists of objects (one Kind each), or "
        '{"records": [{"kind": ..., "values": {...}}]}'
    )


def _imported(item: Any) -> bool:
    return (
        isinstance(item, dict) and isinstance(item.get("kind"), str) and isinstance(item.get("values"), dict)
    )


_PG_TYPES = {
    "smallint": "integer",
    "integer": "integer",
    "bigint": "integer",
    "boolean": "boolean",
    "date": "date",
    "timestamp with time zone": "datetime",
    "text": "text",
    "character varying": "string",
    "character": "string",
    "uuid": "string",
}


def table_sample(
    table: str,
    columns: Sequence[tuple[str, str, bool, int | None, int | None]],
    primary_key: Sequence[str],
    foreign_keys: Mapping[str, str],
    rows: Sequence[Mapping[str, Any]],
) -> Sample:
    """The sample of a PostgreSQL table: its columns (name, data type as information_schema names
    it, nullable, numeric precision, numeric scale), primary key, single-column foreign keys and
    some rows (values as the driver gives them: made JSON-like here)."""
    types: dict[str, dict[str, Any]] = {}
    for name, data_type, nullable, precision, scale in columns:
        if data_type == "numeric" and precision:
            definition: dict[str, Any] = {"type": f"decimal({min(precision, 38)},{min(scale or 0, 38)})"}
        elif data_type in _PG_TYPES:
            definition = {"type": _PG_TYPES[data_type]}
        else:
            continue  # json, arrays, naive timestamps...: from the values
        if not nullable:
            definition["required"] = True
        types[name] = definition
    plain = [{name: _plain(value) for name, value in row.items()} for row in rows]
    return Sample(table, plain, types=types, key=tuple(primary_key), references=dict(foreign_keys))


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat() if value.tzinfo is not None else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


# -- names -------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _singular(word: str) -> str:
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if lower.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def kind_name(text: str) -> str:
    """A Kind name in the schema's grammar: `purchase_orders` -> `PurchaseOrder`."""
    words = _words(text) or ["Record"]
    words[-1] = _singular(words[-1])
    name = "".join(w[:1].upper() + w[1:] for w in words)
    return name if name[:1].isalpha() else "K" + name


def attribute_name(text: str) -> str:
    """An Attribute name in the schema's grammar: `Legal Name` -> `legal_name`."""
    name = "_".join(w.lower() for w in _words(text)) or "value"
    return name if name[:1].isalpha() else "a_" + name


# -- types -------------------------------------------------------------------------------------------


@dataclass
class _Column:
    name: str  # as in the sample
    attribute: str  # in the schema's grammar
    values: list[Any]  # the values present, in row order (canonical text for comparisons)
    missing: int

    @property
    def texts(self) -> list[str]:
        return [_text(v) for v in self.values]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _is_datetime(text: str) -> bool:
    if not _DATETIME.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1))
    except ValueError:
        return False
    return True


def _definition(column: _Column) -> dict[str, Any]:
    values, texts = column.values, column.texts
    definition: dict[str, Any]
    if values and all(
        isinstance(v, bool) or t in ("true", "false") for v, t in zip(values, texts, strict=True)
    ):
        definition = {"type": "boolean"}
    elif values and all(
        not isinstance(v, bool | dict | list) and _INTEGER.match(t)
        for v, t in zip(values, texts, strict=True)
    ):
        definition = {"type": "integer"}
    elif values and all(
        not isinstance(v, bool | dict | list) and (_DECIMAL.match(t) or _INTEGER.match(t))
        for v, t in zip(values, texts, strict=True)
    ):
        definition = {"type": _decimal_type(texts)}
    elif values and all(isinstance(v, str) and _is_date(v) for v in values):
        definition = {"type": "date"}
    elif values and all(isinstance(v, str) and _is_datetime(v) for v in values):
        definition = {"type": "datetime"}
    elif any(len(t) >= TEXT_MIN_LENGTH or "\n" in t for t in texts):
        definition = {"type": "text"}
    elif _is_enum(texts):
        definition = {"type": "enum", "values": sorted(set(texts))}
    else:
        definition = {"type": "string"}
    if column.missing == 0 and values:
        definition["required"] = True
    return definition


def _decimal_type(texts: list[str]) -> str:
    whole, fraction = 1, 0
    for text in texts:
        try:
            number = Decimal(text)
        except InvalidOperation:
            continue
        digits = str(abs(number)).split(".")
        whole = max(whole, len(digits[0].lstrip("0")) or 1)
        fraction = max(fraction, len(digits[1]) if len(digits) > 1 else 0)
    precision = min(38, whole + DECIMAL_HEADROOM + fraction)
    return f"decimal({precision},{min(fraction, precision)})"


def _is_enum(texts: list[str]) -> bool:
    distinct = set(texts)
    return (
        len(texts) >= ENUM_MIN_ROWS
        and 1 <= len(distinct) <= ENUM_MAX_VALUES
        and len(distinct) * 2 <= len(texts)
        and all(0 < len(t) <= 40 for t in distinct)
    )


def _pattern(texts: list[str]) -> str | None:
    """A pattern every value matches when they all have one shape: runs of digits and letters as
    classes with their lengths (a letter the same in every value stays itself), the rest literal."""
    if len(texts) < PATTERN_MIN_VALUES:
        return None
    shapes = {_shape(t) for t in texts}
    if len(shapes) != 1:
        return None
    runs = next(iter(shapes))
    parts, offset = [], 0
    for kind, length in runs:
        chunk = {t[offset : offset + length] for t in texts}
        if kind.startswith("other:") or (kind == "upper" and len(chunk) == 1):
            parts.append(
                "".join(c if c.isalnum() or c in "-_ /:#" else re.escape(c) for c in next(iter(chunk)))
            )
        else:
            cls = {"digit": "[0-9]", "upper": "[A-Z]", "lower": "[a-z]"}[kind]
            parts.append(cls if length == 1 else f"{cls}{{{length}}}")
        offset += length
    pattern = "^" + "".join(parts) + "$"
    return pattern if "[" in pattern else None


def _shape(text: str) -> tuple[tuple[str, int], ...]:
    """Runs of ASCII digits, capitals and small letters with their lengths; any other character is
    a run of its own, named by itself."""
    runs: list[list[Any]] = []
    for char in text:
        if char.isascii() and char.isdigit():
            kind = "digit"
        elif char.isascii() and char.isupper():
            kind = "upper"
        elif char.isascii() and char.islower():
            kind = "lower"
        else:
            runs.append([f"other:{char}", 1])
            continue
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return tuple((str(k), int(n)) for k, n in runs)


# -- the proposal ------------------------------------------------------------------------------------


def _columns(sample: Sample) -> list[_Column]:
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
        columns.append(_Column(name, attribute, present, len(sample.rows) - len(present)))
    return columns


def _key(kind: str, columns: list[_Column], rows: int) -> _Column | None:
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
    kinds: dict[str, tuple[list[_Column], _Column | None]] = {}
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
            definition = _definition(column)
            if column.name in sample.types and definition["type"] != "enum":
                definition = dict(sample.types[column.name])
            elif column.name in sample.types and sample.types[column.name].get("required"):
                definition["required"] = True
            if column is key:
                definition["required"] = True
                if definition["type"] == "enum":
                    definition = {"type": "string", "required": True}
                if definition["type"] == "string" and (pattern := _pattern(column.texts)):
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
    samples: Sequence[Sample], kinds: Mapping[str, tuple[list[_Column], _Column | None]]
) -> list[dict[str, Any]]:
    """Relations from a table's foreign keys (to a table that is sampled too)."""
    names = {sample.name: kind_name(sample.name) for sample in samples if not sample.relation}
    out = []
    for sample in samples:
        for column, table in sample.references.items():
            source, target = names.get(sample.name), names.get(table)
            if source is None or target is None or target not in kinds:
                continue
            stem = re.sub(r"_(id|key|code|number|no|ref)$", "", attribute_name(column))
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
    kinds: Mapping[str, tuple[list[_Column], _Column | None]], samples: list[Sample], notes: list[str]
) -> list[dict[str, Any]]:
    """Relations from samples of Links: each end's Kind is the one whose keys hold every end."""
    keys = {name: set(key.texts) for name, (_, key) in kinds.items() if key is not None}
    out = []
    for sample in samples:
        ends = []
        for end in ("from", "to"):
            held = {_text(row.get(end)) for row in sample.rows}
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
            per_from[_text(row.get("from"))] = per_from.get(_text(row.get("from")), 0) + 1
            per_to[_text(row.get("to"))] = per_to.get(_text(row.get("to")), 0) + 1
        one_from, one_to = max(per_from.values()) <= 1, max(per_to.values()) <= 1
        cardinality = {
            (True, True): "one_to_one",
            (True, False): "many_to_one",
            (False, True): "one_to_many",
            (False, False): "many_to_many",
        }[(one_from, one_to)]
        attributes = {}
        for column in _columns(Sample(sample.name, [dict(row.get("values") or {}) for row in sample.rows])):
            definition = _definition(column)
            definition.pop("required", None)
            attributes[column.attribute] = definition
        definition = {"from": ends[0], "to": ends[1], "cardinality": cardinality}
        if attributes:
            definition["attributes"] = attributes
        out.append({"op": "add_relation", "relation": relation, "definition": definition})
    return out


def _relations(
    kinds: Mapping[str, tuple[list[_Column], _Column | None]],
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
                stem = re.sub(r"_(id|key|code|number|no|ref)$", "", column.attribute) or attribute_name(
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
