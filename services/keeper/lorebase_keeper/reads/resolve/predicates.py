"""What a comparison (comparisons.py) makes: the Attributes it applies to (the one named nearby, or
those of the right type of the named Kinds, narrowed by a unit their description mentions), whether
a value fits an Attribute's type, the predicates in its canonical form, and the candidate itself
(`entry`, with the interval a relative date was read as)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from lorebase.canonical import ValueProblem, canonical_value
from lorebase.schema.model import Attribute
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.dates import Said
from lorebase_keeper.reads.resolve.ground import Span
from lorebase_keeper.reads.resolve.lexicon import UNITS
from lorebase_keeper.reads.resolve.operands import REACH
from lorebase_keeper.reads.resolve.vocabulary import Term, Vocabulary
from lorebase_keeper.reads.resolve.words import Word

NUMERIC = ("integer", "decimal")
DATES = ("date", "datetime")


def fits_shape(term: Term, shape: str, value: Any) -> bool:
    base = str(term.type).split("(")[0]
    if shape == "date":
        return base in DATES
    if base in NUMERIC:
        return True
    return base in DATES and re.fullmatch(r"(19|20)\d{2}", str(value)) is not None


def attribute_of(domain: Domain, term: Term) -> Attribute:
    if term.relation is not None:
        return domain.schema.relations[term.relation].attributes[str(term.attribute)]
    return domain.schema.kinds[term.kind].attributes[str(term.attribute)]


def unit_of(term: Term, unit: Word | None) -> str | None:
    """The unit the description gives, when the question wrote it (or none was written)."""
    words = re.findall(r"\w+", term.description)
    if unit is not None:
        written = {
            form
            for said in (unit.key, unit.sense)
            for form in (said, said.rstrip("s"), UNITS.get(said, said))
        }
        return next((w for w in words if w.casefold() in written), None)
    for known in ("EUR", "USD", "days", "units", "percent"):
        if known in words:
            return known
    return None


def predicates_of(domain: Domain, term: Term, op: str, shape: str, value: Any) -> list[tuple[str, Any]]:
    attr = attribute_of(domain, term)
    if shape == "number" and attr.type in DATES:  # a bare year
        year = int(value)
        shape, value = "date", Said(1, date(year, 1, 1), date(year + 1, 1, 1), False)
    if shape == "date":
        first, after = value.first, value.after
        pairs = {
            "gt": [("ge", after)],
            "ge": [("ge", first)],
            "lt": [("lt", first)],
            "le": [("lt", after)],
            "eq": [("ge", first), ("lt", after)],
            "in": [("ge", first), ("lt", after)],
        }[op]
        return [(o, v.isoformat()) for o, v in pairs]
    if op == "in":
        return []
    try:
        shown = canonical_value(Attribute(attr.name, attr.type, attr.precision, attr.scale), value)
    except ValueProblem:
        return []
    return [(op, shown)]


def with_interval(made: dict[str, Any], value: Any, today: date | None) -> dict[str, Any]:
    """The candidate with the interval of days a relative date was read as, so it can be checked:
    [from, before) counted from the day of the Revision read (`today`)."""
    if isinstance(value, Said) and value.relative and today is not None:
        made["interval"] = {
            "from": value.first.isoformat(),
            "before": value.after.isoformat(),
            "today": today.isoformat(),
        }
    return made


def entry(
    term: Term, op: str, shown: Any, score: float, level: str, matched: str, unit: str | None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"target": "comparison", "kind": term.kind}
    if term.relation is not None:
        entry.update(relation=term.relation, to=term.to)
    entry.update(attribute=term.attribute, type=term.type)
    entry["predicate"] = {"attr": term.attribute, "op": op, "value": shown}
    entry.update(score=score, level=level, matched=matched)
    if unit is not None:
        entry["unit"] = unit
    return entry


def near_attributes(
    named: dict[int, Span],
    start: int,
    end: int,
    shape: str,
    value: Any,
    vocab: Vocabulary,
    kinds: list[str],
    unit: Word | None,
) -> tuple[list[Term], float, str]:
    """The Attributes a comparison at words start..end applies to, with the score and level."""
    for position in [*range(start - 1, max(-1, start - 1 - REACH), -1), end]:
        span = named.get(position)
        if span is None:
            continue
        terms = [
            h.term for h in span.hits if h.term.target == "attribute" and fits_shape(h.term, shape, value)
        ]
        if terms:
            best = max(h.score for h in span.hits if h.term in terms)
            return terms, round(min(best, 1.0), 4), "exact" if best >= 1.0 else "partial"
    fitting = [
        t for t in vocab.attributes if t.kind in kinds and t.relation is None and fits_shape(t, shape, value)
    ]
    if unit is not None:
        with_unit = [t for t in fitting if unit_of(t, unit) is not None]
        fitting = with_unit or fitting
    if len(fitting) == 1:
        return fitting, 0.8, "inferred"
    if 1 < len(fitting) <= 3:
        return fitting, 0.6, "inferred"
    return [], 0.0, ""
