"""The check of a Derivation's expression, and its compilation into a closure.

`Compiler` walks the `ast` of the expression once: it refuses what the language does not have
(with a `DerivationError` saying what to write instead), gives each node its type (number,
string, boolean or any) and turns it into a closure over `Env` (evaluate.py). On the way it
collects what the Derivation reads: the Kind's own Attributes (`reads`) and, per Relation named by
its forward or inverse name, an `Aggregate` with the neighbour Attributes it reads (`aggregates`).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from lorebase.schema.derivations.evaluate import (
    Aggregate,
    Env,
    Failed,
    Fn,
    aggregate_fn,
    category_of,
    reader_of,
    truthy,
)
from lorebase.schema.model import Kind, Relation
from lorebase.schema.policy import compare

_AGGREGATES = ("count", "sum", "min", "max", "avg")
_FUNCTIONS = ("coalesce", "round", "lower", "upper", "len", "abs")
_LITERAL_NAMES = {"true": True, "false": False, "null": None}
_ARITHMETIC: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
}
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)


class DerivationError(ValueError):
    """A Derivation that is not a valid expression for its Attribute; the message says why."""


def _describe(node: ast.AST) -> str:
    names = {
        ast.Subscript: "a subscript",
        ast.Lambda: "a lambda",
        ast.Starred: "a starred expression",
        ast.Dict: "a mapping",
        ast.Set: "a set",
        ast.ListComp: "a comprehension",
        ast.GeneratorExp: "a comprehension",
        ast.DictComp: "a comprehension",
        ast.SetComp: "a comprehension",
        ast.JoinedStr: "an f-string",
        ast.NamedExpr: "an assignment",
        ast.Await: "await",
    }
    return names.get(type(node), type(node).__name__)


def _common(types: Sequence[str], what: str) -> str:
    known = sorted({t for t in types if t != "any"})
    if len(known) > 1:
        raise DerivationError(f"{what} mixes {' and '.join(known)}")
    return known[0] if known else "any"


class Compiler:
    """Checks an expression and turns it into a closure; `reads` and `aggregates` collect what it uses."""

    def __init__(
        self,
        kind: Kind,
        kinds: Mapping[str, Kind],
        relations: Mapping[str, Relation],
        *,
        condition_of: str | None = None,
    ) -> None:
        self.kind = kind
        self.kinds = kinds
        self.relations = relations
        self.condition_of = condition_of  # the aggregate whose `where` condition this is
        self.reads: set[str] = set()
        self.aggregates: dict[str, Aggregate] = {}

    def expr(self, node: ast.expr) -> tuple[Fn, str]:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.arithmetic(node)
        if isinstance(node, ast.BoolOp):
            parts = [self.expr(value)[0] for value in node.values]
            if isinstance(node.op, ast.And):
                return (lambda env: all(truthy(p(env)) for p in parts)), "boolean"
            return (lambda env: any(truthy(p(env)) for p in parts)), "boolean"
        if isinstance(node, ast.Compare):
            return self.comparison(node)
        if isinstance(node, ast.IfExp):
            test, _ = self.expr(node.test)
            (body, body_type), (orelse, else_type) = self.expr(node.body), self.expr(node.orelse)
            type_ = _common([body_type, else_type], "`a if cond else b`")
            return (lambda env: body(env) if truthy(test(env)) else orelse(env)), type_
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            raise DerivationError(
                f"{ast.unparse(node)} reads neighbours: aggregate it, e.g. sum({ast.unparse(node)})"
            )
        if isinstance(node, ast.List | ast.Tuple):
            raise DerivationError("a list may only follow `in` or `not in`, and `where` only an aggregate")
        raise DerivationError(f"{_describe(node)} is not allowed in a Derivation")

    def constant(self, node: ast.Constant) -> tuple[Fn, str]:
        value = node.value
        if value is None:
            return (lambda env: None), "any"
        if isinstance(value, bool):
            return (lambda env: value), "boolean"
        if isinstance(value, str):
            return (lambda env: value), "string"
        if isinstance(value, int | float):
            number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
            return (lambda env: number), "number"
        raise DerivationError(f"the literal {ast.unparse(node)} is not allowed in a Derivation")

    def name(self, node: ast.Name) -> tuple[Fn, str]:
        if node.id in self.kind.attributes:
            attribute = self.kind.attributes[node.id]
            if attribute.derived is not None:
                raise DerivationError(
                    f"{node.id} is derived: a Derivation cannot read another derived Attribute"
                )
            self.reads.add(node.id)
            read, name = reader_of(attribute), node.id
            return (lambda env: read(env[0].get(name))), category_of(attribute)
        if node.id in _LITERAL_NAMES:
            value = _LITERAL_NAMES[node.id]
            return (lambda env: value), "any" if value is None else "boolean"
        if self.condition_of is None and _relation_named(self.relations, node.id) is not None:
            raise DerivationError(f"{node.id} is a Relation: aggregate it, e.g. count({node.id})")
        where = f"neighbours in {self.condition_of}" if self.condition_of else self.kind.name
        known = ", ".join(a for a, attr in self.kind.attributes.items() if attr.derived is None) or "none"
        raise DerivationError(f"unknown name {node.id!r}; the Attributes of {where} are: {known}")

    def unary(self, node: ast.UnaryOp) -> tuple[Fn, str]:
        operand, type_ = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            return (lambda env: not truthy(operand(env))), "boolean"
        if isinstance(node.op, ast.USub | ast.UAdd):
            if type_ not in ("number", "any"):
                raise DerivationError(f"a sign applies to numbers, not to a {type_}")
            negative = isinstance(node.op, ast.USub)

            def signed(env: Env) -> Any:
                value = operand(env)
                if value is None:
                    return None
                if not isinstance(value, Decimal):
                    raise Failed
                return -value if negative else value

            return signed, "number"
        raise DerivationError("operator ~ is not allowed in a Derivation")

    def arithmetic(self, node: ast.BinOp) -> tuple[Fn, str]:
        found = _ARITHMETIC.get(type(node.op))
        if found is None:
            raise DerivationError(
                f"operator {type(node.op).__name__} is not allowed; use + - * / and round()"
            )
        symbol, apply = found
        (left, left_type), (right, right_type) = self.expr(node.left), self.expr(node.right)
        type_ = _common([left_type, right_type], f"`{symbol}`")
        if type_ == "boolean" or (type_ == "string" and symbol != "+"):
            raise DerivationError(f"`{symbol}` does not apply to a {type_}")

        def compute(env: Env) -> Any:
            a, b = left(env), right(env)
            if a is None or b is None:
                return None
            if isinstance(a, Decimal) and isinstance(b, Decimal):
                return apply(a, b)
            if symbol == "+" and isinstance(a, str) and isinstance(b, str):
                return a + b
            raise Failed

        return compute, type_

    def comparison(self, node: ast.Compare) -> tuple[Fn, str]:
        for op in node.ops:
            if not isinstance(op, _COMPARISONS):
                hint = "; compare with == null or != null" if isinstance(op, ast.Is | ast.IsNot) else ""
                raise DerivationError(f"operator {type(op).__name__} is not allowed{hint}")
        operands = [node.left, *node.comparators]
        fns: list[Fn] = []
        for index, operand in enumerate(operands):
            if isinstance(operand, ast.List | ast.Tuple) and index > 0:
                if not isinstance(node.ops[index - 1], ast.In | ast.NotIn):
                    raise DerivationError("a list may only follow `in` or `not in`")
                items = [self.expr(item)[0] for item in operand.elts]
                fns.append(lambda env, items=items: [item(env) for item in items])  # type: ignore[misc]
            else:
                fns.append(self.expr(operand)[0])
        self.enum_values(operands)
        ops = list(node.ops)

        def evaluate(env: Env) -> bool:
            left = fns[0](env)
            for op, fn in zip(ops, fns[1:], strict=True):
                right = fn(env)
                if not compare(op, left, right):
                    return False
                left = right
            return True

        return evaluate, "boolean"

    def enum_values(self, operands: list[ast.expr]) -> None:
        """`status == 'opne'` is a typo the loader catches when the Attribute is an enum."""
        names = [o for o in operands if isinstance(o, ast.Name) and o.id in self.kind.attributes]
        for name in names:
            attribute = self.kind.attributes[name.id]
            if attribute.type != "enum":
                continue
            for other in operands:
                items = other.elts if isinstance(other, ast.List | ast.Tuple) else [other]
                for item in items:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        if item.value not in attribute.values:
                            allowed = ", ".join(attribute.values)
                            raise DerivationError(f"{item.value!r} is not a value of {name.id} ({allowed})")

    def call(self, node: ast.Call) -> tuple[Fn, str]:
        if not isinstance(node.func, ast.Name):
            raise DerivationError(f"only the functions {', '.join(_FUNCTIONS + _AGGREGATES)} can be called")
        name = node.func.id
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise DerivationError(f"{name}() takes positional arguments only")
        if name in _AGGREGATES:
            return self.aggregate(name, node.args)
        if name not in _FUNCTIONS:
            raise DerivationError(
                f"unknown function {name!r}; the functions are {', '.join(_FUNCTIONS + _AGGREGATES)}"
            )
        if name == "round":
            return self.round(node.args)
        if name == "coalesce":
            if not node.args:
                raise DerivationError("coalesce() takes one or more arguments")
            parts = [self.expr(arg) for arg in node.args]
            type_ = _common([t for _, t in parts], "coalesce()")
            fns = [fn for fn, _ in parts]
            return (lambda env: next((v for v in (f(env) for f in fns) if v is not None), None)), type_
        if len(node.args) != 1:
            raise DerivationError(f"{name}() takes one argument")
        arg, type_ = self.expr(node.args[0])
        wanted = "number" if name == "abs" else "string"
        if type_ not in (wanted, "any"):
            raise DerivationError(f"{name}() applies to a {wanted}, not to a {type_}")
        functions: dict[str, Callable[[Any], Any]] = {
            "lower": str.lower,
            "upper": str.upper,
            "len": lambda s: Decimal(len(s)),
            "abs": abs,
        }
        apply = functions[name]
        kind = Decimal if name == "abs" else str

        def function(env: Env) -> Any:
            value = arg(env)
            if value is None:
                return None
            if not isinstance(value, kind):
                raise Failed
            return apply(value)

        return function, "number" if name in ("abs", "len") else "string"

    def round(self, args: list[ast.expr]) -> tuple[Fn, str]:
        if len(args) not in (1, 2):
            raise DerivationError("round() takes a number and, optionally, a number of digits")
        arg, type_ = self.expr(args[0])
        if type_ not in ("number", "any"):
            raise DerivationError(f"round() applies to a number, not to a {type_}")
        digits = 0
        if len(args) == 2:
            given = args[1]
            if not (
                isinstance(given, ast.Constant) and type(given.value) is int and 0 <= given.value <= 38  # noqa: PLR2004
            ):
                raise DerivationError("the digits of round() are a whole number from 0 to 38")
            digits = given.value
        step = Decimal(1).scaleb(-digits)

        def rounded(env: Env) -> Any:
            value = arg(env)
            if value is None:
                return None
            if not isinstance(value, Decimal):
                raise Failed
            return value.quantize(step, rounding=ROUND_HALF_UP)

        return rounded, "number"

    def aggregate(self, function: str, args: list[ast.expr]) -> tuple[Fn, str]:
        if self.condition_of is not None:
            raise DerivationError("an aggregate cannot be used inside a `where` condition")
        if len(args) not in (1, 2):
            raise DerivationError(f"{function}() takes one Relation (and an optional `where` condition)")
        target = args[0]
        attribute_name: str | None = None
        if function == "count":
            if not isinstance(target, ast.Name):
                raise DerivationError("count() takes a Relation: count(rel) or count(rel where condition)")
            written = target.id
        else:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                raise DerivationError(f"{function}() takes a neighbour Attribute: {function}(rel.attribute)")
            written, attribute_name = target.value.id, target.attr
        relation, direction, neighbour = self.relation(written)
        reads: set[str] = set()
        read: Callable[[Any], Any] = lambda value: value  # noqa: E731
        type_ = "number"
        if attribute_name is not None:
            attribute = neighbour.attributes.get(attribute_name)
            if attribute is None:
                known = ", ".join(neighbour.attributes) or "none"
                raise DerivationError(
                    f"{neighbour.name} has no Attribute {attribute_name!r}; its Attributes are: {known}"
                )
            if attribute.derived is not None:
                raise DerivationError(
                    f"{neighbour.name}.{attribute_name} is derived: a Derivation cannot read another derived Attribute"
                )
            type_ = category_of(attribute)
            if function in ("sum", "avg") and type_ != "number":
                raise DerivationError(
                    f"{function}() applies to numbers; {attribute_name} is {attribute.type_name}"
                )
            reads.add(attribute_name)
            read = reader_of(attribute)
        condition: Fn | None = None
        if len(args) == 2:
            inner = Compiler(neighbour, self.kinds, self.relations, condition_of=written)
            condition, _ = inner.expr(args[1])
            reads |= inner.reads
        known_reads = self.aggregates[written].reads if written in self.aggregates else ()
        self.aggregates[written] = Aggregate(
            written, relation.name, direction, neighbour.name, tuple(sorted(reads | set(known_reads)))
        )
        return aggregate_fn(function, written, attribute_name, read, condition), type_

    def relation(self, written: str) -> tuple[Relation, str, Kind]:
        named = _relation_named(self.relations, written)
        own = [
            name
            for r in self.relations.values()
            for name, anchor in ((r.name, r.from_kind), (r.inverse, r.to_kind))
            if name and anchor == self.kind.name
        ]
        if named is None:
            raise DerivationError(
                f"unknown Relation {written!r}; the Relations of {self.kind.name} are: {', '.join(own) or 'none'}"
            )
        relation, direction = named
        anchor, other = (
            (relation.from_kind, relation.to_kind)
            if direction == "forward"
            else (relation.to_kind, relation.from_kind)
        )
        if anchor != self.kind.name:
            raise DerivationError(
                f"{written} reads {anchor} -> {other}, not from {self.kind.name}; "
                f"the Relations of {self.kind.name} are: {', '.join(own) or 'none'}"
            )
        neighbour = self.kinds.get(other)
        if neighbour is None:
            raise DerivationError(f"{written} links to the unknown Kind {other!r}")
        return relation, direction, neighbour


def _relation_named(relations: Mapping[str, Relation], name: str) -> tuple[Relation, str] | None:
    if name in relations:
        return relations[name], "forward"
    for relation in relations.values():
        if relation.inverse == name:
            return relation, "inverse"
    return None


__all__ = ["Compiler", "DerivationError"]
