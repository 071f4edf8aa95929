"""Numbers, dates and comparisons: "above 80", "at least 3", "more than 100 EUR", "tier 1",
"before March 2026", "in 2025" become predicates (`gt`, `ge`, `lt`, `le`, `eq`, and a pair for a
date range) on the Attribute the nearby words ground to.

Which Attribute: the nearest one the words before the comparison named (up to `REACH` words back,
Attributes of Kinds and of Links alike), or right after the number; the type must fit (integer and
decimal for numbers, date and datetime for dates; a bare year fits a date too). When no nearby word
names one, the Attributes of the right type of the Kinds the question names are offered, narrowed
by a unit written after the number that their description mentions ("EUR", "days"); one left is
offered at 0.8 (level `inferred`), several at 0.6. The value is in the Attribute's canonical form;
`unit` repeats the unit the description gives. English comparison words only, for now.

The words of a comparison are read in operands.py; the Attributes it applies to, its predicates
and the candidate it makes are predicates.py's.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.dates import date_at, implicit
from lorebase_keeper.reads.resolve.graded import (
    YEAR,
    Graded,
    along,
    comparative_at,
    declared_along,
    ends,
    operator,
)
from lorebase_keeper.reads.resolve.ground import Span, is_number
from lorebase_keeper.reads.resolve.lexicon import LEVELS
from lorebase_keeper.reads.resolve.operands import (
    NEGATE,
    OPERATORS,
    REACH,
    negated_before,
    operand_at,
    operator_at,
    rate_end,
    state_before,
)
from lorebase_keeper.reads.resolve.predicates import (
    entry,
    fits_shape,
    near_attributes,
    predicates_of,
    unit_of,
    with_interval,
)
from lorebase_keeper.reads.resolve.vocabulary import Term, Vocabulary
from lorebase_keeper.reads.resolve.words import Word


def comparisons(
    words: list[Word],
    used: list[bool],
    spans: list[Span],
    vocab: Vocabulary,
    domain: Domain,
    today: date | None = None,
) -> tuple[list[dict[str, Any]], set[int], set[int]]:
    """Comparison candidates, the words taken as units that earlier levels had grounded (their
    spans no longer count: "EUR" after "more than 100" is a unit, not a currency filter), and the
    first words of Attributes whose value is said ("tier 1": no grouping by tier). The words they
    take are marked used."""
    named = {
        i: s
        for s in spans
        for i in range(s.start, s.end)
        if any(h.term.target == "attribute" for h in s.hits)
    }
    kinds = sorted({h.term.kind for s in spans for h in s.hits if h.term.target in ("kind", "value")})
    out: list[dict[str, Any]] = []
    units: set[int] = set()
    fixed: set[int] = set()
    # a word that names a Kind, Attribute or Relation is never a unit; one that names values may be,
    # and so may a word that is only a part of Attributes' names ("EUR" of `tariff_eur_mwh`)
    names_at = {
        i
        for s in spans
        for i in range(s.start, s.end)
        if any(h.term.target != "value" and h.level != "partial" for h in s.hits)
    }
    index = 0
    while index < len(words):
        level_end = _level(words, used, index, named, vocab, kinds, domain, out, today)
        if level_end is not None:
            units |= level_end[1]
            index = level_end[0]
            continue
        graded = comparative_at(words, used, index, vocab)
        if graded is not None:
            graded_end = _graded(
                words, used, index, graded, named, names_at, vocab, kinds, domain, out, today
            )
            if graded_end is not None:
                units |= graded_end[1]
                index = graded_end[0]
                continue
        found = operator_at(words, used, index)
        near = named
        if found is None and index in named and named[index].start == index == named[index].end - 1:
            # a comparison word that is also an Attribute's name ("since", a Link's date) followed
            # by its operand compares: the Attribute is then looked for around it
            found = operator_at(words, [False] * len(words), index)
            if found is not None and found[1] == 1 and operand_at(words, index + 1, today) is not None:
                near = {i: span for i, span in named.items() if i != index}
            else:
                found = None
        parts: list[tuple[str, str, Any]] = []  # (op, shape, value)
        anchor, end = index, index
        negated = False
        if found is not None:
            op, size = found
            if negated_before(words, used, index) and op in NEGATE:  # "not more than 20", "not before 2026"
                op, negated = NEGATE[op], True
            operand = operand_at(words, index + size, today)
            if operand is not None:
                taken, shape, value = operand
                end = index + size + taken
                parts = [(op, shape, value)]
                if op == "in" and not (shape == "date" or re.fullmatch(r"(19|20)\d{2}", str(value))):
                    parts = []
        elif words[index].sense == "between":
            first = operand_at(words, index + 1, today)
            if first is not None and index + 1 + first[0] < len(words):
                middle = index + 1 + first[0]
                second = operand_at(words, middle + 1, today) if words[middle].sense == "and" else None
                if second is not None and second[1] == first[1]:
                    end = middle + 1 + second[0]
                    parts = [("ge", first[1], first[2]), ("le", second[1], second[2])]
        elif index in named and named[index].end == index + 1 and not any(used[index + 1 : index + 2]):
            operand = operand_at(words, index + 1, today)  # "tier 1": the Attribute, then its value
            if operand is not None and operand[1] == "number":
                anchor, end = index + 1, index + 1 + operand[0]
                parts = [("eq", operand[1], operand[2])]
        elif implicit(words, index):  # "orders placed last month": in that month
            said = date_at(words, index, today)
            if said is not None and said.relative:
                end = index + said.taken
                parts = [("in", "date", said)]
        if not parts:
            index += 1
            continue
        shape, value = parts[0][1], parts[0][2]
        unit = words[end] if end < len(words) and not is_number(words[end]) and end not in names_at else None
        terms, score, level = near_attributes(near, anchor, end, shape, value, vocab, kinds, unit)
        state = state_before(words, used, anchor, shape, value)
        scores = {id(t): score for t in terms}
        if state is not None and level == "inferred":  # "expire before 2027": the date that ends
            ended = ends(domain, vocab, kinds)
            if ended:
                terms, level = [t for t, _ in ended], "state"
                scores = {id(t): s for t, s in ended}
        if unit is not None and all(unit_of(t, unit) is None for t in terms):
            unit = None
        last = rate_end(words, end + (1 if unit is not None else 0), terms if unit is not None else [])
        begin = named[index].start if anchor != index else index
        if negated:
            begin = index - 1
        if level == "state" and state is not None:
            begin = state
        matched = " ".join(w.key for w in words[begin:last])
        made = 0
        for term in terms:
            for op, part_shape, part_value in parts:
                for pred_op, shown in predicates_of(domain, term, op, part_shape, part_value):
                    made_entry = entry(
                        term, pred_op, shown, scores[id(term)], level, matched, unit_of(term, unit)
                    )
                    out.append(with_interval(made_entry, part_value, today))
                    made += 1
        if made:
            if level == "state" and state is not None:
                used[state] = True
            if negated:
                used[index - 1] = True
            if unit is not None and used[end]:
                units.add(end)
            if anchor != index:
                fixed.add(index)  # "tier 1": the Attribute's value is said, it is not grouped by
            used[anchor:last] = [True] * (last - anchor)
            index = last
        else:
            index += 1
    return out, units, fixed


def _graded(
    words: list[Word],
    used: list[bool],
    index: int,
    graded: Graded,
    named: dict[int, Span],
    names_at: set[int],
    vocab: Vocabulary,
    kinds: list[str],
    domain: Domain,
    out: list[dict[str, Any]],
    today: date | None,
) -> tuple[int, set[int]] | None:
    """A comparative with its operand ("cheaper than 20 EUR", "older than 2023"): on the Attribute
    named nearby when one fits, else on the Attributes of the named Kinds having its dimension
    (graded.py). Appends the candidates; answers the index after the words taken and the unit."""
    operand = operand_at(words, index + graded.size, today)
    if operand is None:
        return None
    taken, shape, value = operand
    end = index + graded.size + taken
    unit = words[end] if end < len(words) and not is_number(words[end]) and end not in names_at else None
    year = shape == "number" and YEAR.fullmatch(str(value)) is not None
    scored: list[tuple[Term, float, str]] = []
    for position in range(index - 1, max(-1, index - 1 - REACH), -1):
        span = named.get(position)
        if span is None:
            continue
        fits = [h for h in span.hits if h.term.target == "attribute" and fits_shape(h.term, shape, value)]
        if fits:
            best = max(h.score for h in fits)
            level = "exact" if best >= 1.0 else "partial"
            scored = [(h.term, round(min(h.score, 1.0), 4), level) for h in fits]
            break
    if not scored:
        dates = True if shape == "date" or year else False
        if graded.declared:
            found = declared_along(graded, kinds)
        else:
            found = along(domain, vocab, kinds, graded.dimension, dates=dates)
        if not found and year and not graded.declared:
            found = along(domain, vocab, kinds, graded.dimension, dates=False)
        if unit is not None:
            with_unit = [(t, s) for t, s in found if unit_of(t, unit) is not None]
            found = with_unit or found
        scored = [(t, s, "comparative") for t, s in found if fits_shape(t, shape, value)]
    if unit is not None and all(unit_of(t, unit) is None for t, _, _ in scored):
        unit = None
    last = rate_end(words, end + (1 if unit is not None else 0), [t for t, _, _ in scored] if unit else [])
    first = index - 1 if negated_before(words, used, index) else index  # "not older than 2023"
    matched = " ".join(w.key for w in words[first:last])
    made = 0
    for term, score, level in scored:
        op = operator(graded.dimension, graded.direction, term, graded)
        op = NEGATE[op] if first < index else op
        for pred_op, shown in predicates_of(domain, term, op, shape, value):
            out.append(
                with_interval(
                    entry(term, pred_op, shown, score, level, matched, unit_of(term, unit)), value, today
                )
            )
            made += 1
    if not made:
        return None
    units = {end} if unit is not None and used[end] else set()
    used[first:last] = [True] * (last - first)
    return last, units


def _level(
    words: list[Word],
    used: list[bool],
    index: int,
    named: dict[int, Span],
    vocab: Vocabulary,
    kinds: list[str],
    domain: Domain,
    out: list[dict[str, Any]],
    today: date | None,
) -> tuple[int, set[int]] | None:
    """A verb of level with its number ("running at more than 90", "operating at 100 percent": `eq`
    without a comparison word): on the Attribute named nearby when one fits, else on those of the
    named Kinds having the verb's dimension (level `state`). Appends the candidates; answers the
    index after the words taken and the unit."""
    phrase = next(
        (
            p
            for p in LEVELS
            if tuple(w.sense for w in words[index : index + len(p)]) == p
            and not any(used[index : index + len(p)])
        ),
        None,
    )
    if phrase is None:
        return None
    after = index + len(phrase)
    found = operator_at(words, used, after)
    op, size = found if found is not None and found[0] in ("gt", "ge", "lt", "le", "eq") else ("eq", 0)
    operand = operand_at(words, after + size, today)
    if operand is None or operand[1] != "number":
        return None
    end = after + size + operand[0]
    unit = words[end] if end < len(words) and not is_number(words[end]) else None
    terms, score, level = near_attributes(named, index, end, "number", operand[2], vocab, [], None)
    scored = [(t, score, level) for t in terms]
    if not scored:
        found_terms = along(domain, vocab, kinds, LEVELS[phrase], dates=False)
        if unit is not None:
            found_terms = [(t, s) for t, s in found_terms if unit_of(t, unit) is not None] or found_terms
        scored = [(t, s, "state") for t, s in found_terms]
    if unit is not None and all(unit_of(t, unit) is None for t, _, _ in scored):
        unit = None
    last = rate_end(words, end + (1 if unit is not None else 0), [t for t, _, _ in scored] if unit else [])
    matched = " ".join(w.key for w in words[index:last])
    made = 0
    for term, term_score, term_level in scored:
        for pred_op, shown in predicates_of(domain, term, op, "number", operand[2]):
            out.append(entry(term, pred_op, shown, term_score, term_level, matched, unit_of(term, unit)))
            made += 1
    if not made:
        return None
    units = {end} if unit is not None and used[end] else set()
    used[index:last] = [True] * (last - index)
    return last, units


__all__ = ["OPERATORS", "comparisons", "entry"]
