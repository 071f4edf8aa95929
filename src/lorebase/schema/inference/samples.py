"""Samples for schema inference: the rows of a Kind read from a file (CSV, TSV, JSON, JSON Lines)
or a PostgreSQL table's catalog and rows (lorebase.schema.inference)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

__all__ = ["Sample", "SampleError", "read_samples", "table_sample"]


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
