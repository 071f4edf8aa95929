"""How resolve reads the words of a question: tokens, function words, inflections and typos.

Tokens keep their spelling as typed (`raw`) beside the case-folded form matched against the
vocabulary, because codes (`PL`, `IN`, `EUR`) match only as written: "in" is a word, "IN" a code.
Numbers with a decimal point stay one token, and so do keys like `S-1001` and comparison signs.

Function words (the stop words of the Domain's language, `read.resolve.stop_words`) never ground
on their own: not to values, Kinds or Attributes; they may still be part of a longer name such as
"supplied by". A word nothing matched that is a function word is left out of coverage's `unknown`
and of the miss log, so what remains there is a real gap in the vocabulary.

Numbers: digits ("3", "12.5") and number words ("three", "twenty-five", "twenty five", "a dozen",
"two hundred"; lexicon.py) are numbers wherever a number fits: in comparisons, after an Attribute
("tier one"), before a superlative ("the three cheapest"). A number word is never a word of a Record's
name unless the whole name, or its beginning, is written (the Record level tries whole names
first: "three phase induction motor" is the Part).

Typos: one edit for words of `one_edit_min_letters` letters or more, two from
`two_edits_min_letters` (optimal string alignment distance: a swap of neighbours is one edit).
Trigram similarity alone misses one wrong letter in a six-letter word (about 0.40).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lorebase.settings_model import ResolveLimits
from lorebase.vocabulary import TOKEN as _TOKEN
from lorebase_keeper.reads.resolve.languages import AFTER, GRADES, PERIODS, PHRASES
from lorebase_keeper.reads.resolve.languages import ARTICLES as ARTICLES_OF
from lorebase_keeper.reads.resolve.languages import WORDS as SENSES
from lorebase_keeper.reads.resolve.lexicon import ARTICLES, NUMBER_WORDS, SCALES

TOKEN = _TOKEN
MAX_WORDS = 64


@dataclass(frozen=True)
class Word:
    """A token of the question: as typed, case-folded for matching names and values (`key`), and
    the English word of the lexicon it stands for (`sense`: `key` itself in English, "cheaper" for
    "billiger"), which the lexicon's levels read (languages.py)."""

    raw: str
    key: str
    sense: str = ""

    def __post_init__(self) -> None:
        if not self.sense:
            object.__setattr__(self, "sense", self.key)


ELIDED = re.compile(r"(l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu)'(\w.*)", re.IGNORECASE)


def tokens(text: str, language: str = "en") -> list[Word]:
    """The tokens of `text`, at most MAX_WORDS of them, with their senses in `language`. French
    elisions are two words ("l'année": l', année)."""
    found = TOKEN.findall(text)
    if language == "fr":
        found = [part for t in found for part in _elided(t)]
    words = [Word(t, t.casefold()) for t in found][:MAX_WORDS]
    if language not in SENSES:
        return words
    senses = _senses([w.key for w in words], language)
    return [Word(w.raw, w.key, sense) for w, sense in zip(words, senses, strict=True)]


def _elided(token: str) -> list[str]:
    match = ELIDED.fullmatch(token)
    return [token] if match is None else [token[: match.end(1) + 1], match[2]]


def _is_number(sense: str) -> bool:
    return sense.replace(".", "", 1).isdigit() or _number_parts(sense) is not None


def _senses(keys: list[str], language: str) -> list[str]:
    """The English senses of the words of a question in `language` (languages.py): phrases first,
    then single words; French "plus"/"moins" after an article are "most"/"least", and a word of
    time said after its period or number swaps senses with it ("mois dernier": last month)."""
    table, phrases = SENSES[language], PHRASES.get(language, {})
    longest = max((len(p) for p in phrases), default=0)
    out = list(keys)
    taken = [False] * len(keys)
    index = 0
    while index < len(keys):
        for size in range(longest, 1, -1):
            run = tuple(keys[index : index + size])
            if len(run) == size and run in phrases:
                out[index : index + size] = phrases[run]
                taken[index : index + size] = [True] * size
                index += size
                break
        else:
            sense = table.get(keys[index])
            if sense is not None:
                out[index], taken[index] = sense, True
            index += 1
    grades, articles = GRADES.get(language, {}), ARTICLES_OF.get(language, frozenset())
    for index, key in enumerate(keys):
        if key in grades and not taken[index]:
            before = index - 1
            while before >= 0 and _is_number(out[before]):
                before -= 1
            out[index] = grades[key][1 if before >= 0 and keys[before] in articles else 0]
    after = AFTER.get(language, frozenset())
    for index, key in enumerate(keys):
        if key in after and index > 0 and (out[index - 1] in PERIODS or _is_number(out[index - 1])):
            out[index - 1], out[index] = out[index], out[index - 1]
    return out


def _number_parts(word: str) -> list[str] | None:
    """The number words of one token ("twenty-five": twenty, five), or None."""
    parts = word.split("-")
    if all(p in NUMBER_WORDS or p in SCALES for p in parts) and parts[0] not in SCALES:
        return parts
    return None


def number_at(words: list[Word], index: int) -> tuple[int, str] | None:
    """(tokens taken, the number in digits) of a number starting at `index`: digits, or number
    words ("three", "twenty-five", "twenty five", "a dozen", "two hundred and fifty")."""
    if index >= len(words):
        return None
    key = words[index].sense
    if key.replace(".", "", 1).isdigit():
        return 1, key
    total, current, taken, seen = 0, 0, 0, False
    at = index
    if key in ARTICLES:  # "a dozen": only with a scale after it
        if at + 1 < len(words) and words[at + 1].sense in SCALES:
            current, at, seen = 1, at + 1, True
        else:
            return None
    while at < len(words):
        word = words[at].sense
        if word == "and" and seen and at + 1 < len(words) and _number_parts(words[at + 1].sense):
            at += 1
            continue
        parts = _number_parts(word) if word not in SCALES else [word]
        if parts is None:
            break
        last = current % 100 if current else 0
        fits = True
        for part in parts:
            if part in SCALES:
                scale = SCALES[part]
                if scale >= 1000:
                    total += (current or 1) * scale
                    current = 0
                else:
                    current = (current or 1) * scale
            elif NUMBER_WORDS[part] < 10 and last >= 20 and last % 10 == 0:
                current += NUMBER_WORDS[part]  # "twenty five"
            elif current % 100 == 0 or not seen:
                current += NUMBER_WORDS[part]
            else:
                fits = False
                break
            last = current % 100
            seen = True
        if not fits:
            break
        at += 1
        taken = at - index
    if not seen or not taken:
        return None
    return taken, str(total + current)


def is_number_word(word: Word) -> bool:
    """A token that is (part of) a number written in words."""
    return _number_parts(word.sense) is not None or word.sense in SCALES


def stop_words(limits: ResolveLimits) -> frozenset[str]:
    """The function words of the Domain's language (empty for a language without a list)."""
    return frozenset(w.casefold() for w in getattr(limits.stop_words, limits.language))


def inflections(word: str) -> list[str]:
    """Base forms an English plural or verb form may come from, most likely first
    ("suppliers" -> "supplier", "categories" -> "category", "costing" -> "cost")."""
    out: list[str] = []
    if len(word) > 4 and word.endswith("ies"):
        out.append(word[:-3] + "y")
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        out.append(word[:-2])
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    if len(word) > 5 and word.endswith("ing"):
        out += [word[:-3], word[:-3] + "e"]
    if len(word) > 4 and word.endswith("ed"):
        out += [word[:-2], word[:-1]]
    return [w for w in dict.fromkeys(out) if w != word]


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of a and b, or limit + 1 when it is larger than limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1] if previous[-1] <= limit else limit + 1


def edits_allowed(word: str, limits: ResolveLimits) -> int:
    """How many edits a typo of `word` may have (0: too short to guess)."""
    letters = len(word)
    if letters >= limits.two_edits_min_letters:
        return 2
    if letters >= limits.one_edit_min_letters:
        return 1
    return 0


def typo_score(word: str, edits: int) -> float:
    """The score of a typo match: below exact (1.0) and alias (0.95) matches, lower per edit and for
    shorter words, where one edit changes more of the word."""
    return round(max(0.5, 0.9 - 0.1 * edits - 0.2 * edits / max(len(word), 1)), 4)


def is_code(value: str, limits: ResolveLimits) -> bool:
    """A stored value that is a code (`PL`, `EUR`, `IN`): short, upper-case letters and digits.
    Codes match only when the question writes them the same way."""
    return (
        0 < len(value) <= limits.code_max_chars
        and value.upper() == value
        and any(c.isalpha() for c in value)
        and value.isalnum()
    )


def split_name(name: str) -> list[str]:
    """The words of a schema name: `lead_time_days` -> lead, time, days; `PurchaseOrder` ->
    purchase, order."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return [w.casefold() for w in spaced.split()]


__all__ = [
    "MAX_WORDS",
    "Word",
    "edit_distance",
    "edits_allowed",
    "inflections",
    "is_code",
    "is_number_word",
    "number_at",
    "split_name",
    "stop_words",
    "tokens",
    "typo_score",
]
