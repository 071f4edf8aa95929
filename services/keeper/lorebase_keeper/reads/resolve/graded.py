"""Gradable words: which dimension a comparative or superlative speaks of ("cheaper", "the most
expensive", "the three oldest"), and which Attributes of the Kinds a question names have it.

A dimension (lexicon.py) applies to Attributes of some types, and is recognised by its cues: a word
of the Attribute's name or aliases (`strong`, "cost" of `unit_cost`, an alias "price") or of its
description (`weak`, "EUR" of "Standard unit cost in EUR"). Dates have an age and a recency of
their own: among date Attributes, those whose name or description says they start something
("from", "raised", "registered", "ordered") come first. The Attributes found are ranked by how
strongly they have the dimension; the best ones are offered at 0.8 when one Attribute is best, 0.6
each when several tie (nothing is guessed), the weaker at 0.5, at most MAX_OFFERED in all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lorebase.schema.model import Attribute
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.lexicon import DATES, DIMENSIONS, END_CUES, MORE, MOST, START_CUES
from lorebase_keeper.reads.resolve.vocabulary import Term, Vocabulary
from lorebase_keeper.reads.resolve.words import Word, split_name

MAX_OFFERED = 3
YEAR = re.compile(r"(19|20)\d{2}")


@dataclass(frozen=True)
class Graded:
    """A gradable phrase: its dimension, its direction (+1 more, -1 less) and the words it takes.
    A word a Domain declares (an Attribute's `comparatives`) has no dimension: `declared` holds the
    Attributes declaring it, each with its operator (lt, gt, min, max)."""

    dimension: str
    direction: int
    size: int
    declared: tuple[tuple[Term, str], ...] = ()


DECLARED_DIRECTION = {"lt": -1, "gt": 1, "min": -1, "max": 1}


def _declared(vocab: Vocabulary, word: str, ops: tuple[str, ...], size: int) -> Graded | None:
    found = tuple((term, op) for term, op in vocab.graded.get(word, ()) if op in ops)
    if not found:
        return None
    return Graded("", DECLARED_DIRECTION[found[0][1]], size, found)


def declared_along(graded: Graded, kinds: list[str]) -> list[tuple[Term, float]]:
    """The Attributes declaring the word, of the Kinds the question names when some are (all
    readable ones otherwise): 0.8 for one, 0.6 each for several (nothing guessed), none beyond
    MAX_OFFERED."""
    terms = sorted([t for t, _ in graded.declared if not kinds or t.kind in kinds], key=lambda t: t.rank)
    if not terms or len(terms) > MAX_OFFERED:
        return []
    return [(t, 0.8 if len(terms) == 1 else 0.6) for t in terms]


def _form(word: str, part: str) -> tuple[str, int] | None:
    for name, dimension in DIMENSIONS.items():
        if word in dimension[part]:
            return name, int(dimension[part][word])
    return None


def comparative_at(words: list[Word], used: list[bool], index: int, vocab: Vocabulary) -> Graded | None:
    """ "cheaper than", "more expensive than", "less risky than" at `index`; a word the Domain
    declares comes before the lexicon's."""
    keys = [w.sense for w in words[index : index + 3]]
    if len(keys) >= 2 and keys[1] == "than" and not any(used[index : index + 2]):
        declared = _declared(vocab, words[index].key, ("lt", "gt"), 2)
        if declared is not None:
            return declared
        found = _form(keys[0], "comparative")
        if found is not None:
            return Graded(found[0], found[1], 2)
    if len(keys) == 3 and keys[0] in MORE and keys[2] == "than" and not any(used[index : index + 3]):
        found = _form(keys[1], "positive")
        if found is not None:
            return Graded(found[0], found[1] * MORE[keys[0]], 3)
    return None


def superlative_at(words: list[Word], used: list[bool], index: int, vocab: Vocabulary) -> Graded | None:
    """ "cheapest", "most expensive", "least risky" at `index`; a word the Domain declares comes
    before the lexicon's."""
    if used[index]:
        return None
    declared = _declared(vocab, words[index].key, ("min", "max"), 1)
    if declared is not None:
        return declared
    found = _form(words[index].sense, "superlative")
    if found is not None:
        return Graded(found[0], found[1], 1)
    if words[index].sense in MOST and index + 1 < len(words) and not used[index + 1]:
        found = _form(words[index + 1].sense, "positive")
        if found is not None:
            return Graded(found[0], found[1] * MOST[words[index].sense], 2)
    return None


def schema_attribute(domain: Domain, term: Term) -> Attribute:
    if term.relation is not None:
        return domain.schema.relations[term.relation].attributes[str(term.attribute)]
    return domain.schema.kinds[term.kind].attributes[str(term.attribute)]


def base_type(term: Term) -> str:
    return str(term.type).split("(")[0]


def strength(domain: Domain, term: Term, dimension: str) -> int:
    """How strongly an Attribute has the dimension: 2 named, 1 described, 0 not at all."""
    spec = DIMENSIONS[dimension]
    base = base_type(term)
    if base not in spec["types"]:
        return 0
    attr = schema_attribute(domain, term)
    named = set(split_name(str(term.attribute)))
    for alias in attr.aliases:
        named |= {w.casefold() for w in re.findall(r"\w+", alias)}
    described = {w.casefold() for w in re.findall(r"\w+", term.description)}
    if base in DATES and dimension in ("age", "recency"):
        return 2 if (named | described) & START_CUES else 1
    if named & set(spec["strong"]):
        return 2
    if described & set(spec["weak"]):
        return 1
    return 0


def along(
    domain: Domain, vocab: Vocabulary, kinds: list[str], dimension: str, dates: bool | None = None
) -> list[tuple[Term, float]]:
    """The Attributes of `kinds` (every readable Kind when none) having the dimension, with their
    scores, best first. `dates`: only dates (True), only numbers (False), either (None)."""
    found: list[tuple[int, Term]] = []
    for term in vocab.attributes:
        if term.relation is not None or (kinds and term.kind not in kinds):
            continue
        if dates is not None and (base_type(term) in DATES) != dates:
            continue
        level = strength(domain, term, dimension)
        if level:
            found.append((level, term))
    if not found:
        return []
    found.sort(key=lambda item: (-item[0], item[1].rank))
    best = found[0][0]
    top = [t for s, t in found if s == best]
    scored = [(t, 0.8 if len(top) == 1 else 0.6) for t in top]
    scored += [(t, 0.5) for s, t in found if s != best]
    return scored[:MAX_OFFERED] if len(top) <= MAX_OFFERED else []


def operator(dimension: str, direction: int, term: Term, graded: Graded | None = None) -> str:
    """gt for more of the dimension, lt for less; an older date is an earlier one. A declared word
    says its own operator on the Attributes declaring it."""
    if graded is not None and graded.declared:
        same = (term.kind, term.attribute, term.relation)
        op = next((op for t, op in graded.declared if (t.kind, t.attribute, t.relation) == same), None)
        return {"lt": "lt", "min": "lt", "gt": "gt", "max": "gt"}.get(
            op or "", "gt" if direction > 0 else "lt"
        )
    flip = dimension == "age" and base_type(term) in DATES
    return "gt" if (direction > 0) != flip else "lt"


__all__ = [
    "MAX_OFFERED",
    "YEAR",
    "Graded",
    "along",
    "base_type",
    "comparative_at",
    "declared_along",
    "ends",
    "operator",
    "schema_attribute",
    "strength",
    "superlative_at",
]


def ends(domain: Domain, vocab: Vocabulary, kinds: list[str]) -> list[tuple[Term, float]]:
    """The date Attributes of `kinds` (every readable Kind when none) whose name or description
    says they end something ("valid_to", "Last day the agreement applies", "expires_on"): what a
    verb of state such as "expire" speaks of. 0.8 for one, 0.6 each for several."""
    found = []
    for term in vocab.attributes:
        if term.relation is not None or (kinds and term.kind not in kinds) or base_type(term) not in DATES:
            continue
        words = set(split_name(str(term.attribute))) | {
            w.casefold() for w in re.findall(r"\w+", term.description)
        }
        for alias in schema_attribute(domain, term).aliases:
            words |= {w.casefold() for w in re.findall(r"\w+", alias)}
        if words & END_CUES:
            found.append(term)
    if len(found) > MAX_OFFERED:
        return []
    return [(t, 0.8 if len(found) == 1 else 0.6) for t in sorted(found, key=lambda t: t.rank)]
