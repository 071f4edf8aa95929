"""Reading Attributes (of Kinds, Relations, Traits) and Operation parameters, and writing them back."""

from __future__ import annotations

import dataclasses
import math
import re
from decimal import Decimal, localcontext
from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.schema._reader import LOWER_NAME, Members, Problems, entries, join, show, words
from lorebase.schema.model import ATTRIBUTE_TYPES, SENSITIVITIES, Attribute

__all__ = ["COMPARATIVE_OPERATORS", "attribute_document", "attributes_document", "read_attributes"]

_MEMBERS = (
    "type",
    "required",
    "unique",
    "pattern",
    "min",
    "max",
    "values",
    "description",
    "aliases",
    "value_aliases",
    "comparatives",
    "resolvable",
    "sensitivity",
    "derived",
    "vault",
)
_DECIMAL_TYPE = re.compile(r"decimal\(\s*([0-9]+)\s*,\s*([0-9]+)\s*\)")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_BOUNDED = ("integer", "decimal", "string", "text")


def read_attributes(
    node: Any, path: str, problems: Problems, *, parameters: bool = False, derivable: bool = False
) -> dict[str, Attribute]:
    """The Attributes of an `attributes` (or `parameters`) mapping, in declaration order.

    Only the Attributes of Kinds are `derivable`; their Derivations are compiled by the loader once
    the Relations are known (lorebase.schema.derivations).
    """
    found: dict[str, Attribute] = {}
    for name, spec in entries(node, path, problems):
        where = join(path, name)
        problems.name(where, name, LOWER_NAME, "a parameter" if parameters else "an Attribute")
        found[name] = _read_attribute(name, spec, where, problems, parameter=parameters, derivable=derivable)
    return found


def _read_derived(members: Members, *, derivable: bool) -> str | None:
    if not members.has("derived"):
        return None
    where = members.at("derived")
    if not derivable:
        members.problems.add(where, "only Attributes of Kinds can be derived")
        return None
    source = members.text("derived", None)
    if source is None:
        return None
    if members.raw("required") is True:
        members.problems.add(
            members.at("required"),
            "a derived Attribute cannot be required (its value is absent when it cannot be computed)",
        )
    if members.raw("unique") is True:
        members.problems.add(members.at("unique"), "a derived Attribute cannot be unique")
    return source


def _read_vault(members: Members, *, derivable: bool) -> bool:
    """`vault: true`: the values live in the vault (docs/erasure.md). Kind Attributes only, never
    unique (a ref differs per Record, so uniqueness cannot be checked) nor derived."""
    if not members.flag("vault"):
        return False
    where = members.at("vault")
    if not derivable:
        members.problems.add(where, "only Attributes of Kinds can be vault Attributes")
        return False
    for member in ("unique", "derived"):
        if members.raw(member) not in (None, False):
            members.problems.add(where, f"a vault Attribute cannot be {member}")
    return True


def _read_attribute(
    name: str, node: Any, path: str, problems: Problems, *, parameter: bool, derivable: bool
) -> Attribute:
    members = Members(node, path, problems, _MEMBERS + (("default",) if parameter else ()))
    type_, precision, scale = _read_type(members)
    known = type_ in ATTRIBUTE_TYPES
    pattern = members.text("pattern", None)
    if pattern is not None:
        if known and type_ not in ("string", "text"):
            problems.add(members.at("pattern"), f"a pattern applies to string and text, not {type_}")
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.add(members.at("pattern"), f"not a valid regular expression: {exc}")
            pattern = None  # the schema fails anyway; checking a default must not trip on it
    low, high = (_read_bound(members, bound, type_ if known else None) for bound in ("min", "max"))
    if low is not None and high is not None and low > high:
        problems.add(path, f"min ({low}) is greater than max ({high})")
    values = members.words("values")
    if type_ == "enum" and not values:
        problems.add(members.at("values"), "an enum needs a non-empty list of values")
    elif known and type_ != "enum" and members.has("values"):
        problems.add(members.at("values"), f"values apply to enum only, not {type_}")
    sensitivity = members.words("sensitivity")
    for index, tag in enumerate(sensitivity):
        if tag not in SENSITIVITIES:
            problems.add(
                join(members.at("sensitivity"), index),
                f"unknown tag {tag!r}; expected one of {', '.join(SENSITIVITIES)}",
            )
    resolvable = members.flag("resolvable", None)
    vault = _read_vault(members, derivable=derivable)
    if vault and not sensitivity:
        sensitivity = ("pii",)  # a vault value is personal data unless the schema tags it otherwise
    attribute = Attribute(
        name=name,
        type=type_,
        precision=precision,
        scale=scale,
        values=values,
        required=bool(members.flag("required")),
        unique=bool(members.flag("unique")),
        pattern=pattern,
        min=low,
        max=high,
        description=members.text("description") or "",
        aliases=members.words("aliases"),
        value_aliases=_read_value_aliases(members, values if type_ == "enum" else None),
        comparatives=_read_comparatives(members, type_ if known else None, parameter=parameter),
        resolvable=resolvable,
        sensitivity=tuple(tag for tag in sensitivity if tag in SENSITIVITIES),
        derived=_read_derived(members, derivable=derivable),
        vault=vault,
    )
    if parameter and members.has("default") and known:
        try:
            default = canonical_value(attribute, members.raw("default"))
        except ValueProblem as exc:
            problems.add(members.at("default"), f"{exc.message} ({exc.rule})")
        else:
            attribute = dataclasses.replace(attribute, default=default)
    return attribute


def _read_type(members: Members) -> tuple[str, int | None, int | None]:
    written = members.text("type", None, required=True)
    if written is None:
        return "", None, None
    if written in ATTRIBUTE_TYPES and written != "decimal":
        return written, None, None
    match = _DECIMAL_TYPE.fullmatch(written)
    if match is None:
        # The message is exactly "unknown type 'int'": callers and tests match it; docs list the types.
        hint = " (write decimal(p,s), e.g. decimal(10,2))" if written == "decimal" else ""
        members.problems.add(members.at("type"), f"unknown type {written!r}{hint}")
        return written, None, None
    precision, scale = int(match[1]), int(match[2])
    if not 1 <= precision <= 38:
        members.problems.add(members.at("type"), f"decimal precision must be 1..38, got {precision}")
    elif not 0 <= scale <= precision:
        members.problems.add(members.at("type"), f"decimal scale must be 0..{precision}, got {scale}")
    return "decimal", precision, scale


def _read_bound(members: Members, name: str, type_: str | None) -> Decimal | None:
    value = members.raw(name)
    if value is None:
        return None
    where = members.at(name)
    if type_ is not None and type_ not in _BOUNDED:
        members.problems.add(where, f"{name} applies to integer, decimal, string and text, not {type_}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        members.problems.add(where, f"expected a number, got {show(value)}")
        return None
    if isinstance(value, float) and not math.isfinite(value):
        members.problems.add(where, f"expected a finite number, got {show(value)}")
        return None
    if isinstance(value, str) and not _NUMBER.fullmatch(value):
        members.problems.add(where, f"expected a number, got {show(value)}")
        return None
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    integral = number == number.to_integral_value()
    if type_ in ("string", "text") and (not integral or number < 0):
        members.problems.add(where, f"a length bound must be a whole number >= 0, got {value}")
        return None
    if type_ == "integer" and not integral:
        members.problems.add(where, f"an integer bound must be a whole number, got {value}")
        return None
    if integral:
        return Decimal(int(number))
    with localcontext() as context:
        context.prec = len(number.as_tuple().digits)
        return number.normalize()  # 0.50 -> 0.5, never rounded


def _read_value_aliases(members: Members, enum_values: tuple[str, ...] | None) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for stored, words_ in members.entries("value_aliases"):
        where = join(members.at("value_aliases"), stored)
        if enum_values is not None and stored not in enum_values:
            members.problems.add(where, f"{stored!r} is not one of the values ({', '.join(enum_values)})")
        aliases = words(words_, where, members.problems)
        found[stored] = aliases
    return found


COMPARATIVE_OPERATORS = {
    "lt": "a comparative meaning less (cheaper than)",
    "gt": "a comparative meaning more (pricier than)",
    "min": "a superlative: the least first (cheapest)",
    "max": "a superlative: the most first (priciest)",
}
_ORDERED = ("integer", "decimal", "date", "datetime")
_COMPARATIVE_WORD = re.compile(r"[^\W\d_]+")


def _read_comparatives(members: Members, type_: str | None, *, parameter: bool) -> dict[str, str]:
    """`comparatives: {cheaper: lt, pricier: gt, cheapest: min}`: one word each, an operator of
    COMPARATIVE_OPERATORS, on an Attribute of an ordered type (not a parameter)."""
    found: dict[str, str] = {}
    pairs = members.entries("comparatives")
    if pairs and parameter:
        members.problems.add(members.at("comparatives"), "comparatives apply to Attributes, not parameters")
        return found
    if pairs and type_ is not None and type_ not in _ORDERED:
        members.problems.add(
            members.at("comparatives"),
            f"comparatives apply to ordered types ({', '.join(_ORDERED)}), not {type_}",
        )
        return found
    for word, op in pairs:
        where = join(members.at("comparatives"), word)
        if not _COMPARATIVE_WORD.fullmatch(word) or word != word.casefold():
            members.problems.add(where, f"{word!r} must be one lower-case word (letters only)")
        elif op not in COMPARATIVE_OPERATORS:
            members.problems.add(
                where, f"unknown operator {show(op)}; expected one of {', '.join(COMPARATIVE_OPERATORS)}"
            )
        else:
            found[word] = op
    return found


def _bound_document(bound: Decimal | None) -> int | str | None:
    if bound is None:
        return None
    return int(bound) if bound == bound.to_integral_value() else format(bound, "f")


def attribute_document(
    attribute: Attribute, *, parameter: bool = False, derivable: bool = False
) -> dict[str, Any]:
    """The normalised document of an Attribute: every member spelled out, null when absent."""
    document: dict[str, Any] = {
        "type": attribute.type_name,
        "required": attribute.required,
        "unique": attribute.unique,
        "pattern": attribute.pattern,
        "min": _bound_document(attribute.min),
        "max": _bound_document(attribute.max),
    }
    if attribute.type == "enum":
        document["values"] = list(attribute.values)
    document.update(
        description=attribute.description,
        aliases=list(attribute.aliases),
        value_aliases={stored: list(aliases) for stored, aliases in attribute.value_aliases.items()},
        resolvable=attribute.resolvable,
        sensitivity=list(attribute.sensitivity),
    )
    if attribute.comparatives:  # absent when empty: documents (and their digests) stay as they were
        document["comparatives"] = dict(attribute.comparatives)
    if parameter:
        document["default"] = attribute.default
    if derivable:
        document["derived"] = attribute.derived
    if attribute.vault:
        document["vault"] = True
    return document


def attributes_document(
    attributes: dict[str, Attribute], *, parameters: bool = False, derivable: bool = False
) -> dict[str, Any]:
    return {
        name: attribute_document(attribute, parameter=parameters, derivable=derivable)
        for name, attribute in attributes.items()
    }
