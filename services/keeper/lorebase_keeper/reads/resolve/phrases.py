"""The levels of resolve that read no data: names, comparisons and intent hints, over the words the
Record level left (answer.py runs the others around them). Pure: the same words, vocabulary and
Revision time give the same candidates and hints (tests/unit/test_resolve_phrases.py)."""

from __future__ import annotations

from datetime import date
from typing import Any

from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.comparisons import comparisons
from lorebase_keeper.reads.resolve.dates import WORDS as DATE_WORDS
from lorebase_keeper.reads.resolve.ground import merged, names
from lorebase_keeper.reads.resolve.hints import hints
from lorebase_keeper.reads.resolve.lexicon import STATES
from lorebase_keeper.reads.resolve.states import states
from lorebase_keeper.reads.resolve.vocabulary import Vocabulary
from lorebase_keeper.reads.resolve.words import Word


def phrases(
    words: list[Word], used: list[bool], vocab: Vocabulary, domain: Domain, today: date | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Candidates and hints of the words not yet `used`; the words they take are marked used.
    `today` is the day of the Revision read (UTC), which relative dates count from."""
    spans = names(words, used, vocab)
    compared, units, fixed = comparisons(words, used, spans, vocab, domain, today)
    spans = [span for span in spans if not units & set(range(span.start, span.end))]
    stated, has_link = states(words, used, spans, vocab, domain, today)
    candidates = [c for span in spans for c in merged(span)] + compared + stated
    free = [span for span in spans if span.start not in fixed]
    return candidates, hints(words, used, free, vocab, domain) + has_link


def needs_today(words: list[Word]) -> bool:
    """Whether the words need the day of the Revision read: a verb of state in the past, or a date
    said relative to today ("last month", "since Q3", "before the end of March")."""
    return any(w.sense in STATES or w.sense in DATE_WORDS for w in words)


__all__ = ["needs_today", "phrases"]
