"""Names and types for schema inference: names in the schema's grammar, and an Attribute's
definition from the values of a column (lorebase.schema.inference)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Column", "attribute_name", "definition_of", "kind_name", "pattern_of", "text_of"]

ENUM_MAX_VALUES = 12  # an enum has at most this many distinct values...
ENUM_MIN_ROWS = 6  # ...in a sample of at least this many values, each value seen twice on average
TEXT_MIN_LENGTH = 200  # a string this long (or with a line break) is text
PATTERN_MIN_VALUES = 10  # a key's pattern is proposed from at least this many values
DECIMAL_HEADROOM = 4  # integer digits a decimal type has beyond the widest value of the sample
_INTEGER = re.compile(r"^[+-]?[0-9]+\Z")
_DECIMAL = re.compile(r"^[+-]?([0-9]+)\.([0-9]+)\Z")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})\Z")


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
class Column:
    name: str  # as in the sample
    attribute: str  # in the schema's grammar
    values: list[Any]  # the values present, in row order (canonical text for comparisons)
    missing: int

    @property
    def texts(self) -> list[str]:
        return [text_of(v) for v in self.values]


def text_of(value: Any) -> str:
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


def definition_of(column: Column) -> dict[str, Any]:
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


def pattern_of(texts: list[str]) -> str | None:
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
