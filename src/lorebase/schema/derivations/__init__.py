"""Derivations: derived Attributes, computed from a Record's own values and its neighbours.

A Kind Attribute may declare `derived: "<expression>"`. The expression is a small, safe subset of
Python parsed with `ast` and checked when the schema loads (docs/schema.md, "Derived Attributes"):
the Kind's own non-derived Attribute names, literals, `+ - * /`, comparisons, `and`/`or`/`not`,
`a if cond else b`, the functions coalesce, round, lower, upper, len and abs, and aggregates over a
Relation of the Kind by its forward or inverse name: `count(rel)`, `sum(rel.attr)`,
`min(rel.attr)`, `max(rel.attr)`, `avg(rel.attr)`, each optionally filtered with
`where <condition over the neighbour's Attributes>`.

Evaluation reads canonical values (integers and decimals are read as numbers); a null operand of
arithmetic gives null; an evaluation error (division by zero, a type that does not apply) or a
result that is not a valid value of the Attribute gives no value (`evaluate` returns None).

The package's modules: parse.py (`compile_derivation`: the source text parsed and compiled),
compiler.py (the check of the expression and its compilation into a closure, `DerivationError`) and
evaluate.py (`Derivation`, `Aggregate` and what runs when a Derivation is evaluated).
"""

from lorebase.schema.derivations.compiler import DerivationError
from lorebase.schema.derivations.evaluate import Aggregate, Derivation
from lorebase.schema.derivations.parse import compile_derivation

__all__ = ["Aggregate", "Derivation", "DerivationError", "compile_derivation"]
