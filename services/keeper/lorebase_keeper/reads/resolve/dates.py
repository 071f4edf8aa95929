"""Dates as people say them, as an interval of days [first, after): "2026-03-01", "March 2026",
"March" (of the Revision's year), "Q3", "Q3 2026", "the end of March" and "the start of Q3" (a
day: the first day after the end, the first day), "last month", "this year", "next quarter", "last
week" (weeks start on Monday), "the last 30 days", "the past 2 weeks", "today", "yesterday".

Relative ones count from `today`, the day (UTC) of the Revision read: the same request at the same
Revision reads the same interval, and the comparison says it (`interval`, docs/resolve.md).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from lorebase_keeper.reads.resolve.words import Word, number_at

MONTHS = {name.casefold(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.casefold(): i for i, name in enumerate(calendar.month_abbr) if name}
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
YEAR = re.compile(r"(19|20)\d{2}")
QUARTER = re.compile(r"q([1-4])")
RELATIVE = {"last": -1, "past": -1, "previous": -1, "this": 0, "current": 0, "next": 1}
PERIODS = ("day", "week", "month", "quarter", "year")
EDGES = {"end": "end", "start": "start", "beginning": "start"}
# the words that make a date depend on the day of the Revision
WORDS = frozenset({*RELATIVE, "today", "yesterday", "tomorrow", "q1", "q2", "q3", "q4", *MONTHS, *EDGES})


@dataclass(frozen=True)
class Said:
    """A date said: the words taken, its days [first, after), and whether it counted from today."""

    taken: int
    first: date
    after: date
    relative: bool


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year + month // 12, month % 12 + 1, 1)


def _shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _period(today: date, period: str, offset: int) -> tuple[date, date]:
    """The period holding today, moved by offset periods."""
    if period == "day":
        first = today + timedelta(days=offset)
        return first, first + timedelta(days=1)
    if period == "week":
        first = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        return first, first + timedelta(weeks=1)
    if period == "month":
        first = _shift_months(date(today.year, today.month, 1), offset)
        return first, _shift_months(first, 1)
    if period == "quarter":
        first = _shift_months(date(today.year, 3 * ((today.month - 1) // 3) + 1, 1), 3 * offset)
        return first, _shift_months(first, 3)
    first = date(today.year + offset, 1, 1)
    return first, date(first.year + 1, 1, 1)


def _year_after(words: list[Word], at: int) -> int | None:
    if at < len(words) and YEAR.fullmatch(words[at].sense):
        return int(words[at].sense)
    return None


def _period_word(word: str) -> str | None:
    base = word[:-1] if word.endswith("s") else word
    return base if base in PERIODS else None


def date_at(words: list[Word], at: int, today: date | None) -> Said | None:
    """The date said at `at`, if any (relative forms only when `today` is known)."""
    if at >= len(words):
        return None
    key = words[at].sense
    if ISO_DATE.fullmatch(key):
        try:
            day = date.fromisoformat(key)
        except ValueError:
            return None
        return Said(1, day, day + timedelta(days=1), False)
    if key == "the" and at + 1 < len(words) and words[at + 1].sense in RELATIVE | EDGES.keys():
        inner = date_at(words, at + 1, today)  # "the end of March", "the last 30 days"
        return None if inner is None else Said(inner.taken + 1, inner.first, inner.after, inner.relative)
    if key in MONTHS and (words[at].key != "may" or words[at].raw[:1].isupper()):
        year = _year_after(words, at + 1)
        if year is not None:
            return Said(2, *_month(year, MONTHS[key]), False)
        if today is not None:
            return Said(1, *_month(today.year, MONTHS[key]), True)
        return None
    quarter = QUARTER.fullmatch(key)
    if quarter is not None:
        year = _year_after(words, at + 1)
        if year is None and today is None:
            return None
        month = 3 * (int(quarter.group(1)) - 1) + 1
        first = date(year if year is not None else today.year, month, 1)  # type: ignore[union-attr]
        return Said(2 if year is not None else 1, first, _shift_months(first, 3), year is None)
    if key in EDGES and at + 1 < len(words):
        of = 1 if words[at + 1].sense == "of" else 0  # "the end of March"; German "Ende März"
        inner = date_at(words, at + 1 + of, today)
        if inner is None:
            inner_year = _year_after(words, at + 1 + of)
            if inner_year is None:
                return None
            inner = Said(1, date(inner_year, 1, 1), date(inner_year + 1, 1, 1), False)
        day = inner.after if EDGES[key] == "end" else inner.first
        return Said(
            inner.taken + 1 + of,
            day,
            day + timedelta(days=1) if EDGES[key] == "start" else day,
            inner.relative,
        )
    if today is None:
        return None
    if key in ("today", "yesterday", "tomorrow"):
        first, after = _period(today, "day", {"today": 0, "yesterday": -1, "tomorrow": 1}[key])
        return Said(1, first, after, True)
    if key in RELATIVE and at + 1 < len(words):
        period = _period_word(words[at + 1].sense)
        if period is not None and not words[at + 1].sense.endswith("s"):
            return Said(2, *_period(today, period, RELATIVE[key]), True)
        number = number_at(words, at + 1)
        if number is not None and RELATIVE[key] < 0 and number[1].isdigit():
            unit_at = at + 1 + number[0]
            period = _period_word(words[unit_at].sense) if unit_at < len(words) else None
            if period is not None and period != "quarter":
                count = int(number[1])
                if period in ("day", "week"):
                    first = today - timedelta(days=count * (7 if period == "week" else 1) - 1)
                elif period == "month":
                    first = _shift_months(date(today.year, today.month, 1), -count)
                    first = first.replace(day=min(today.day, calendar.monthrange(first.year, first.month)[1]))
                    first += timedelta(days=1)
                else:
                    first = date(today.year - count, today.month, 1) + timedelta(days=today.day)
                return Said(unit_at + 1 - at, first, today + timedelta(days=1), True)
    return None


def implicit(words: list[Word], at: int) -> bool:
    """A relative date said without a comparison word ("orders placed last month"): `in`."""
    return words[at].sense in RELATIVE or words[at].sense in ("today", "yesterday", "tomorrow")


__all__ = ["WORDS", "Said", "date_at", "implicit"]
