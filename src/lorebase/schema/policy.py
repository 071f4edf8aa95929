"""Review policies: a small, safe boolean expression over an Operation's parameters.

The grammar is a subset of Python expressions, parsed with `ast` and checked when the schema loads:
parameter names, string/number/true/false/null literals (also `True`/`False`/`None`), lists or tuples
of literals, comparisons (== != < <= > >= in, not in), `and`, `or`, `not` and parentheses. Nothing
else (calls, attributes, subscripts, arithmetic, lambdas, unknown names) is accepted.

Evaluation reads canonical parameter values: a string compared with a number is read as a decimal
number (integer and decimal parameters travel as strings), an absent parameter is None, and an
ordering comparison that does not apply (None, or a string with a number that is not numeric) is
false rather than an error.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from lorebase.schema.model import Attribute

__all__ = ["Policy", "PolicyError", "compare", "compile_policy"]

_MAX_LENGTH = 2000
_LITERAL_NAMES = {"true": True, "false": False, "null": None}
_ORDER: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_SYMBOLS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
}


class PolicyError(ValueError):
    """A review policy that is not a safe expression over the parameters; the message says why."""


@dataclass(frozen=True)
class Policy:
    """A compiled review policy; `evaluate` is true when an invocation must be reviewed."""

    source: str
    _tree: ast.expr = field(compare=False, repr=False)

    def evaluate(self, parameters: Mapping[str, object]) -> bool:
        return bool(_evaluate(self._tree, parameters))


def compile_policy(source: str, parameter_names: Iterable[str] | Mapping[str, Attribute]) -> Policy:
    """Parse and check `source`; given Attributes, enum comparisons with unknown values are errors too."""
    if not isinstance(source, str) or not source.strip():
        raise PolicyError("a review policy must be a non-empty expression string")
    if len(source) > _MAX_LENGTH:
        raise PolicyError(f"a review policy is limited to {_MAX_LENGTH} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise PolicyError(f"invalid expression: {exc.msg} (column {exc.offset})") from None
    attributes = dict(parameter_names) if isinstance(parameter_names, Mapping) else {}
    _Checker(set(parameter_names), attributes).visit(tree.body)
    return Policy(source, tree.body)


class _Checker:
    def __init__(self, names: set[str], attributes: dict[str, Attribute]) -> None:
        self.names = names
        self.attributes = attributes

    def visit(self, node: ast.expr) -> None:
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                self.visit(value)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.visit(node.operand)
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _SYMBOLS:
                    hint = "; compare with == null or != null" if isinstance(op, ast.Is | ast.IsNot) else ""
                    raise PolicyError(f"operator {type(op).__name__} is not allowed{hint}")
            operands = [node.left, *node.comparators]
            for operand in operands:
                self.operand(operand)
            self.enum_values(operands, node.ops)
        else:
            self.operand(node)

    def operand(self, node: ast.expr) -> None:
        if isinstance(node, ast.Name):
            if node.id not in self.names and node.id not in _LITERAL_NAMES:
                known = ", ".join(sorted(self.names)) or "none"
                raise PolicyError(f"unknown name {node.id!r}; the parameters are: {known}")
        elif isinstance(node, ast.List | ast.Tuple):
            for item in node.elts:
                if not _is_literal(item):
                    raise PolicyError("lists in a review policy may hold literals only")
        elif isinstance(node, ast.BoolOp | ast.UnaryOp | ast.Compare) and not _is_literal(node):
            self.visit(node)
        elif not _is_literal(node):
            raise PolicyError(f"{_describe(node)} is not allowed in a review policy")

    def enum_values(self, operands: list[ast.expr], ops: list[ast.cmpop]) -> None:
        """`severity == 'critcal'` is a typo the loader catches when the parameter is an enum."""
        for left, op, right in zip(operands, ops, operands[1:], strict=False):
            for name_node, other in ((left, right), (right, left)):
                if not isinstance(name_node, ast.Name) or type(op) not in _SYMBOLS:
                    continue
                attribute = self.attributes.get(name_node.id)
                if attribute is None or attribute.type != "enum":
                    continue
                items = other.elts if isinstance(other, ast.List | ast.Tuple) else [other]
                for item in items:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        if item.value not in attribute.values:
                            allowed = ", ".join(attribute.values)
                            raise PolicyError(f"{item.value!r} is not a value of {name_node.id} ({allowed})")


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str | int | float | bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    return False


def _describe(node: ast.expr) -> str:
    names = {
        ast.Call: "a call",
        ast.Attribute: "attribute access",
        ast.Subscript: "a subscript",
        ast.Lambda: "a lambda",
        ast.BinOp: "arithmetic",
        ast.Constant: "this literal",
    }
    return names.get(type(node), type(node).__name__)


def _evaluate(node: ast.expr, parameters: Mapping[str, object]) -> Any:
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_evaluate(value, parameters) for value in node.values)
        return any(_evaluate(value, parameters) for value in node.values)
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return not _evaluate(node.operand, parameters)
        return ast.literal_eval(node)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, parameters)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, parameters)
            if not compare(op, left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Name):
        if node.id in parameters:
            return parameters[node.id]
        return _LITERAL_NAMES.get(node.id)
    if isinstance(node, ast.List | ast.Tuple):
        return [_evaluate(item, parameters) for item in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    raise PolicyError(f"{_describe(node)} is not allowed in a review policy")  # unreachable once checked


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Decimal):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _pair(left: Any, right: Any) -> tuple[Any, Any] | None:
    """The two values made comparable: numbers (or a number and a numeric string) as Decimals."""
    is_number = [not isinstance(v, bool) and isinstance(v, int | float | Decimal) for v in (left, right)]
    if any(is_number):
        a, b = _number(left), _number(right)
        return (a, b) if a is not None and b is not None else None
    if type(left) is type(right):
        return left, right
    return None


def _equal(left: Any, right: Any) -> bool:
    pair = _pair(left, right)
    return pair is not None and pair[0] == pair[1]


def compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    """`left op right` with the review policy semantics (also used by Derivations): numeric strings
    compare as numbers, an ordering that does not apply is false, `in` is membership or substring."""
    if isinstance(op, ast.Eq):
        return _equal(left, right)
    if isinstance(op, ast.NotEq):
        return not _equal(left, right)
    if isinstance(op, ast.In | ast.NotIn):
        if isinstance(right, list):
            found = any(_equal(left, item) for item in right)
        elif isinstance(right, str) and isinstance(left, str):
            found = left in right
        else:
            found = False
        return found if isinstance(op, ast.In) else not found
    pair = _pair(left, right)
    if pair is None or pair[0] is None or isinstance(pair[0], bool):
        return False
    try:
        return bool(_ORDER[type(op)](*pair))
    except TypeError:
        return False
