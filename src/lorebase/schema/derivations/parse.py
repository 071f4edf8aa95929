"""From the source text of a Derivation to a compiled `Derivation`: `compile_derivation` parses it
with `ast` (`where` in an aggregate made parseable first), checks and compiles it (compiler.py) and
checks its type against the Attribute's.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Mapping
from typing import Any

from lorebase.schema.derivations.compiler import Compiler, DerivationError
from lorebase.schema.derivations.evaluate import Derivation, category_of
from lorebase.schema.model import Attribute, Kind, Relation

_MAX_LENGTH = 2000


def compile_derivation(
    source: Any,
    attribute: Attribute,
    kind: Kind,
    kinds: Mapping[str, Kind],
    relations: Mapping[str, Relation],
) -> Derivation:
    """Parse and check the Derivation of `attribute` of `kind`; DerivationError says what is wrong."""
    if not isinstance(source, str) or not source.strip():
        raise DerivationError("a Derivation must be a non-empty expression string")
    if len(source) > _MAX_LENGTH:
        raise DerivationError(f"a Derivation is limited to {_MAX_LENGTH} characters")
    try:
        tree = ast.parse(_where_as_comma(source).strip(), mode="eval")
    except SyntaxError as exc:
        raise DerivationError(f"invalid expression: {exc.msg} (column {exc.offset})") from None
    compiler = Compiler(kind, kinds, relations)
    fn, type_ = compiler.expr(tree.body)
    wanted = category_of(attribute)
    if type_ not in ("any", wanted):
        raise DerivationError(
            f"the Derivation gives a {type_}, but {attribute.name} is {attribute.type_name}"
        )
    return Derivation(
        source=source,
        attribute=attribute.name,
        reads=tuple(sorted(compiler.reads)),
        aggregates=tuple(compiler.aggregates.values()),
        _target=attribute,
        _fn=fn,
    )


def _where_as_comma(source: str) -> str:
    """`count(rel where cond)` becomes `count(rel ,     cond)`: the same columns, parseable by `ast`."""
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source  # ast.parse reports the problem
    for token in tokens:
        if token.type == tokenize.NAME and token.string == "where":
            row, col = token.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + ",    " + line[col + 5 :]
    return "".join(lines)


__all__ = ["compile_derivation"]
