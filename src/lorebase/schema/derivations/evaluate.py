"""The compiled form of a Derivation and what runs when it is evaluated.

`Derivation` holds the source, what it reads (its own Attributes and the `Aggregate`s over
Relations, which tell keeper what neighbours to load) and a closure over `Env` (the Record's values
and its neighbours'). The closures the compiler (compiler.py) builds call what is here: how a
canonical value is read (`reader_of`: integers and decimals as Decimal, by the Attribute's
`category_of`), `truthy`, and the aggregates over neighbours (`aggregate_fn`). An evaluation
error (`Failed`, division by zero, a type that does not apply) or a result that is not a valid
value of the Attribute gives no value (`Derivation.evaluate` returns None).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, DecimalException, InvalidOperation, localcontext
from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.schema.model import Attribute

_PRECISION = 50  # digits of intermediate decimal arithmetic

Env = tuple[Mapping[str, Any], Mapping[str, Sequence[Mapping[str, Any]]]]  # (own values, neighbours)
Fn = Callable[[Env], Any]


class Failed(Exception):
    """An evaluation error: the derived value is left absent."""


@dataclass(frozen=True)
class Aggregate:
    """A Relation a Derivation aggregates over, and what it reads of the neighbours."""

    name: str  # as written: the forward or the inverse name
    relation: str  # the forward name
    direction: str  # forward (the Record is the Link's `from`) | inverse (its `to`)
    neighbour: str  # the Kind at the other end
    reads: tuple[str, ...]  # neighbour Attributes read (aggregated or filtered on)


@dataclass(frozen=True)
class Derivation:
    """A compiled Derivation; `evaluate` gives the canonical derived value, or None."""

    source: str
    attribute: str
    reads: tuple[str, ...]  # own Attributes read
    aggregates: tuple[Aggregate, ...]
    _target: Attribute = field(compare=False, repr=False)
    _fn: Fn = field(compare=False, repr=False)

    def evaluate(
        self, values: Mapping[str, Any], neighbours: Mapping[str, Sequence[Mapping[str, Any]]]
    ) -> Any:
        """The value from the Record's canonical `values` and its neighbours' values (by aggregate name)."""
        try:
            with localcontext() as context:
                context.prec = _PRECISION
                result = self._fn((values, neighbours))
            return canonical_value(self._target, result)
        except (Failed, ArithmeticError, DecimalException, ValueProblem, TypeError, ValueError):
            return None


def category_of(attribute: Attribute) -> str:
    if attribute.type in ("integer", "decimal"):
        return "number"
    if attribute.type == "boolean":
        return "boolean"
    return "string"


def reader_of(attribute: Attribute) -> Callable[[Any], Any]:
    """How a canonical value of `attribute` is read: numbers as Decimal, the rest as they are."""
    category = category_of(attribute)

    def read(value: Any) -> Any:
        if value is None:
            return None
        if category == "number":
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise Failed
            try:
                return Decimal(value)
            except InvalidOperation:
                raise Failed from None
        if category == "boolean" and not isinstance(value, bool):
            raise Failed
        if category == "string" and not isinstance(value, str):
            raise Failed
        return value

    return read


def truthy(value: Any) -> bool:
    return value is not None and bool(value)


def aggregate_fn(
    function: str,
    written: str,
    attribute: str | None,
    read: Callable[[Any], Any],
    condition: Fn | None,
) -> Fn:
    empty: Mapping[str, Sequence[Mapping[str, Any]]] = {}

    def aggregate(env: Env) -> Any:
        rows = env[1].get(written, ())
        if condition is not None:
            rows = [row for row in rows if truthy(condition((row, empty)))]
        if function == "count":
            return Decimal(len(rows))
        assert attribute is not None
        values = [v for v in (read(row.get(attribute)) for row in rows) if v is not None]
        if function == "sum":
            return sum(values, Decimal(0))
        if not values:
            return None
        if function == "avg":
            return sum(values, Decimal(0)) / len(values)
        return min(values) if function == "min" else max(values)

    return aggregate


__all__ = [
    "Aggregate",
    "Derivation",
    "Env",
    "Failed",
    "Fn",
    "aggregate_fn",
    "category_of",
    "reader_of",
    "truthy",
]
