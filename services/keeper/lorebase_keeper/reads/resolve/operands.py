"""The words of a comparison (comparisons.py): its operator ("more than", "at least", "before"...)
and the number or date after it, a "not" just before it (its opposite), a rate after its unit ("EUR
per MWh") and a verb of state before a date ("expire before 2027")."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from lorebase_keeper.reads.resolve.dates import date_at
from lorebase_keeper.reads.resolve.graded import (
    YEAR,
)
from lorebase_keeper.reads.resolve.lexicon import STATES
from lorebase_keeper.reads.resolve.vocabulary import Term
from lorebase_keeper.reads.resolve.words import Word, number_at

REACH = 4
OPERATORS: list[tuple[tuple[str, ...], str]] = sorted(
    [
        (("more", "than"), "gt"),
        (("greater", "than"), "gt"),
        (("higher", "than"), "gt"),
        (("above",), "gt"),
        (("over",), "gt"),
        (("exceeding",), "gt"),
        ((">",), "gt"),
        (("after",), "gt"),
        (("less", "than"), "lt"),
        (("fewer", "than"), "lt"),
        (("lower", "than"), "lt"),
        (("below",), "lt"),
        (("under",), "lt"),
        (("<",), "lt"),
        (("before",), "lt"),
        (("at", "least"), "ge"),
        (("no", "less", "than"), "ge"),
        (("minimum",), "ge"),
        ((">=",), "ge"),
        (("since",), "ge"),
        (("from",), "ge"),
        (("at", "most"), "le"),
        (("no", "more", "than"), "le"),
        (("up", "to"), "le"),
        (("maximum",), "le"),
        (("<=",), "le"),
        (("until",), "le"),
        (("exactly",), "eq"),
        (("equal", "to"), "eq"),
        (("=",), "eq"),
        (("in",), "in"),
        (("during",), "in"),
    ],
    key=lambda item: -len(item[0]),
)


def operand_at(words: list[Word], at: int, today: date | None) -> tuple[int, str, Any] | None:
    """(words used, "number" | "date", value) of the operand at `at`: a number, a date as people
    say it (dates.py; relative ones only with `today`), or a year. A date value is a `Said`."""
    if at >= len(words):
        return None
    said = date_at(words, at, today)
    if said is not None:
        return said.taken, "date", said
    number = number_at(words, at)
    if number is not None:
        return number[0], "number", number[1]
    return None


def operator_at(words: list[Word], used: list[bool], index: int) -> tuple[str, int] | None:
    for phrase, name in OPERATORS:
        window = tuple(w.sense for w in words[index : index + len(phrase)])
        if window == phrase and not any(used[index : index + len(phrase)]):
            return name, len(phrase)
    return None


NEGATE = {"gt": "le", "ge": "lt", "lt": "ge", "le": "gt"}


def negated_before(words: list[Word], used: list[bool], index: int) -> bool:
    """ "not" just before a comparison ("not older than", "nicht mehr als"): its opposite."""
    return index > 0 and not used[index - 1] and words[index - 1].sense == "not"


def rate_end(words: list[Word], last: int, terms: list[Term]) -> int:
    """After a unit, "per MWh" when the Attribute's description gives it ("EUR per MWh"): part of
    the unit, not a grouping. Answers the index after the words taken."""
    if last + 1 >= len(words) or words[last].sense != "per" or not terms:
        return last
    said = words[last + 1].key
    for term in terms:
        if said in {w.casefold() for w in re.findall(r"\w+", term.description)}:
            return last + 2
    return last


def state_before(words: list[Word], used: list[bool], start: int, shape: str, value: Any) -> int | None:
    """The index of a verb of state ("expire") up to REACH words before a date comparison."""
    if shape != "date" and not (shape == "number" and YEAR.fullmatch(str(value))):
        return None
    for position in range(start - 1, max(-1, start - 1 - REACH), -1):
        if not used[position] and words[position].sense in STATES:
            return position
    return None
