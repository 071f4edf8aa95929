"""Canonical values: the one form in which Attribute values travel, are stored and are hashed.

string, text, enum and date values are JSON strings; datetime is `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` in
UTC; integer and decimal are JSON strings (`"90"`, `"24.01"`, a decimal always with exactly its scale
of fraction digits); boolean is JSON true/false; null is no value. `canonical_value` turns a JSON
value into that form for one Attribute, or raises `ValueProblem` naming the rule it breaks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation, localcontext
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from lorebase.schema.model import Attribute

__all__ = [
    "ValueProblem",
    "canonical_datetime",
    "canonical_json",
    "canonical_text",
    "canonical_value",
    "sha256_hex",
]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?"
    r"(?:([Zz])|([+-])([0-9]{2})(?::?([0-9]{2}))?)"
)


class ValueProblem(ValueError):
    """A value that breaks a rule of its Attribute; `rule` is a stable code such as `value.max`."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def canonical_json(obj: Any) -> bytes:
    """UTF-8 JSON with sorted keys and no spaces: equal values give equal bytes (and hashes).

    The bytes are those of `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
    which Revision ids and digests have always hashed. orjson writes the same bytes for strings,
    integers of 64 bits, booleans, null, lists and objects with string members, ten times faster
    (a 100,000-Record import digests its changes); anything else it could write differently (a
    float, a subclass, a dataclass, a date) falls back to the standard library."""
    try:
        out = orjson.dumps(obj, option=_ORJSON_CANONICAL)
    except TypeError:  # orjson.JSONEncodeError: a big integer, a member name that is not text...
        out = None
    if out is None or _may_differ(out):
        out = json.dumps(
            obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")
    return out


# orjson may write a float differently from json (`1e-07`, `5e-05`), and writes NaN and infinities
# as null where json refuses them: output with a number holding a fraction or an exponent, or with
# a null, goes through json instead. With digits and signs deleted and `,` `[` read as `:`, such a
# number is `:.` or `:e` (or the output starts with one); text such as "a:1.5" or "null" inside a
# string looks the same, which only costs the slower path. (A regular expression over the output
# took twice as long as orjson's encoding itself.)
_NUMBER_MARKS = bytes.maketrans(b",[E", b"::e")
_DIGITS = b"0123456789+-"


def _may_differ(out: bytes) -> bool:
    if out[:1] in b"0123456789-" or b"null" in out:
        return True
    marks = out.translate(_NUMBER_MARKS, _DIGITS)
    return b":." in marks or b":e" in marks


_ORJSON_CANONICAL = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_text(value: Any) -> str:
    """The text of a value inside `${param}` interpolation and Markdown: `True` -> "true", None -> ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return canonical_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def canonical_value(attr: Attribute, value: Any) -> str | bool | None:
    """The canonical form of `value` for `attr`, or `ValueProblem`. None stays None."""
    if value is None:
        return None
    kind = attr.type
    if kind in ("string", "text"):
        return _string(attr, value)
    if kind == "enum":
        return _enum(attr, value)
    if kind == "integer":
        if type(value) is str and _CANONICAL_INTEGER.fullmatch(value):  # the common case, faster
            _bounds(attr, int(value))
            return value
        number = _integer(value)
        _bounds(attr, number)
        return str(number)
    if kind == "decimal":
        return _decimal(attr, value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ValueProblem("value.type", f"expected true or false, got {_show(value)}")
        return value
    if kind == "date":
        return _date(value)
    if kind == "datetime":
        return canonical_datetime(value)
    raise ValueProblem("value.type", f"unknown type {kind!r}")


def canonicalizer(attr: Attribute) -> Callable[[Any], str | bool | None]:
    """`canonical_value(attr, ·)` as one function made once per Attribute, for checking many values
    (an import's 100,000 Records): a value already in its canonical form, the usual case, returns
    at once without the steps that would find it so; any other goes through `canonical_value`."""
    slow = partial(canonical_value, attr)
    kind = attr.type
    bounded = attr.min is not None or attr.max is not None
    if kind in ("string", "text") and not bounded and attr.pattern is None:

        def string(value: Any) -> str | bool | None:
            return value if type(value) is str else slow(value)

        return string
    if kind == "integer":
        integer = _CANONICAL_INTEGER.fullmatch

        def whole(value: Any) -> str | bool | None:
            if type(value) is str and integer(value):
                if bounded:
                    _bounds(attr, int(value))
                return value
            return slow(value)

        return whole
    if kind == "decimal" and not bounded:
        decimal = _canonical_decimal(attr.precision or 38, attr.scale or 0).fullmatch

        def fixed(value: Any) -> str | bool | None:
            if type(value) is str and decimal(value) and (value[0] != "-" or value.strip("-0.")):
                return value
            return slow(value)

        return fixed
    return slow


def canonical_datetime(value: Any) -> str:
    """An ISO 8601 date and time with an offset (or Z) as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` in UTC."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        moment = _parse_datetime(value)
    else:
        raise ValueProblem("value.type", f"expected an ISO 8601 datetime string, got {_show(value)}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueProblem("value.type", "a datetime needs an offset or Z (naive datetimes are ambiguous)")
    try:
        utc = moment.astimezone(dt.UTC)
    except OverflowError:
        raise ValueProblem("value.type", f"{_show(value)} is out of range in UTC") from None
    text = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    if utc.microsecond:
        text += f".{utc.microsecond:06d}"
    return text + "Z"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _string(attr: Attribute, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueProblem("value.type", f"expected a string, got {_show(value)}")
    length = len(value)
    if attr.min is not None and length < attr.min:
        raise ValueProblem("value.min", f"must be at least {attr.min} characters long, got {length}")
    if attr.max is not None and length > attr.max:
        raise ValueProblem("value.max", f"must be at most {attr.max} characters long, got {length}")
    if attr.pattern is not None and _compiled(attr.pattern).fullmatch(value) is None:
        raise ValueProblem("value.pattern", f"{_show(value)} does not match the pattern {attr.pattern!r}")
    return value


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _enum(attr: Attribute, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueProblem("value.type", f"expected one of {', '.join(attr.values)}, got {_show(value)}")
    if value in attr.values:
        return value
    hint = ""
    for stored, words in attr.value_aliases.items():
        if value in words:
            hint = f" ({value!r} is an alias of {stored!r})"
            break
    raise ValueProblem("value.enum", f"{_show(value)} is not one of {', '.join(attr.values)}{hint}")


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueProblem("value.type", f"expected an integer, got {_show(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        if not (value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)) or value != int(
            value
        ):
            raise ValueProblem("value.type", f"expected an integer, got {_show(value)}")
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # more digits than int() converts
            raise ValueProblem("value.type", f"integer {_show(value)} is too long") from None
    raise ValueProblem("value.type", f"expected an integer, got {_show(value)}")


def _bounds(attr: Attribute, number: int | Decimal) -> None:
    if attr.min is not None and number < attr.min:
        raise ValueProblem("value.min", f"must be at least {attr.min}, got {number}")
    if attr.max is not None and number > attr.max:
        raise ValueProblem("value.max", f"must be at most {attr.max}, got {number}")


def _decimal(attr: Attribute, value: Any) -> str:
    precision, scale = attr.precision or 38, attr.scale or 0
    if (
        type(value) is str
        and attr.min is None
        and attr.max is None
        and _canonical_decimal(precision, scale).fullmatch(value)
        and (value[0] != "-" or value.strip("-0."))
    ):
        return value  # already canonical (an import's usual value): what the steps below return
    if isinstance(value, bool):
        raise ValueProblem("value.type", f"expected a decimal number, got {_show(value)}")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value)) if math.isfinite(value) else Decimal("NaN")
    elif isinstance(value, str) and _DECIMAL.fullmatch(value):
        number = Decimal(value)
    else:
        raise ValueProblem("value.type", f"expected a decimal number, got {_show(value)}")
    if not number.is_finite():
        raise ValueProblem("value.type", f"expected a finite decimal number, got {_show(value)}")
    if number != 0 and number.adjusted() >= precision - scale:
        raise ValueProblem(
            "value.precision",
            f"{_show(value)} has more than {precision - scale} integer digits (decimal({precision},{scale}))",
        )
    with localcontext() as context:
        context.prec = precision + 2
        try:
            exact = number.quantize(Decimal(1).scaleb(-scale))
        except InvalidOperation:
            exact = None
        if exact is None or exact != number:
            raise ValueProblem(
                "value.precision",
                f"{_show(value)} has more than {scale} fraction digits (decimal({precision},{scale}))",
            )
    if exact.is_zero():
        exact = abs(exact)  # no "-0.00"
    _bounds(attr, exact)
    return format(exact, "f")


# Text that the steps of `canonical_value` would give back unchanged: an integer without sign or
# leading zeros (18 digits at most), and a decimal with exactly its scale of fraction digits and at
# most its precision less its scale of integer digits (no "-0", "-0.00": those lose their sign).
_CANONICAL_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,17}")


@lru_cache(maxsize=256)
def _canonical_decimal(precision: int, scale: int) -> re.Pattern[str]:
    whole = "0" if precision <= scale else f"0|[1-9][0-9]{{0,{precision - scale - 1}}}"
    fraction = rf"\.[0-9]{{{scale}}}" if scale else ""
    return re.compile(rf"-?(?:{whole}){fraction}")


def _date(value: Any) -> str:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str) and (match := _DATE.fullmatch(value)):
        try:
            return dt.date(*(int(part) for part in match.groups())).isoformat()
        except ValueError:
            raise ValueProblem("value.type", f"{_show(value)} is not a calendar date") from None
    raise ValueProblem("value.type", f"expected a date as YYYY-MM-DD, got {_show(value)}")


def _parse_datetime(text: str) -> dt.datetime:
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise ValueProblem(
            "value.type", f"expected an ISO 8601 datetime with an offset or Z, got {_show(text)}"
        )
    year, month, day, hour, minute, second, fraction, zulu, sign, off_hours, off_minutes = match.groups()
    if fraction and len(fraction) > 6 and fraction[6:].strip("0"):
        raise ValueProblem("value.precision", f"{_show(text)} is more precise than microseconds")
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        offset = dt.timedelta(0)
        if not zulu:
            offset = dt.timedelta(hours=int(off_hours), minutes=int(off_minutes or 0))
            offset = -offset if sign == "-" else offset
        zone = dt.timezone(offset)
        return dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0), micro, tzinfo=zone
        )
    except ValueError:
        raise ValueProblem("value.type", f"{_show(text)} is not a valid date and time") from None
