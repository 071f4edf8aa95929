"""What Keeper's resolve and Scribe's suggestions both need of a Domain's vocabulary: trigram
similarity exactly as pg_trgm computes it, and which Attributes have their values indexed."""

from __future__ import annotations

import re
from typing import Any

from lorebase.settings_model import ResolveLimits

__all__ = ["TOKEN", "indexed", "similarity", "trigrams", "values_read", "words_of"]

# How resolve splits what a caller typed into words: comparison operators, numbers, and words that
# may hold ' and - ("O'Neil", "erase-me-7391").
TOKEN = re.compile(r"[<>]=?|=|\d+(?:\.\d+)?(?![\w-])|[\w][\w'-]*", re.UNICODE)


def words_of(text: str, *, min_length: int = 1) -> set[str]:
    """The words of `text` as resolve reads them, lower-cased, of at least `min_length` characters."""
    return {word.casefold() for word in TOKEN.findall(text) if len(word) >= min_length}


def trigrams(text: str) -> set[str]:
    """pg_trgm's trigrams: each word, lower-cased and padded with two spaces before and one after."""
    grams: set[str] = set()
    for word in re.findall(r"[\w]+", text.lower()):
        padded = f"  {word} "
        grams.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return grams


def similarity(a: str, b: str) -> float:
    left, right = trigrams(a), trigrams(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def indexed(attr: Any, distinct: list[tuple[str, int]], limits: ResolveLimits) -> bool:
    """Whether resolve indexes the values of `attr`, given its distinct (value, Records) pairs:
    enums always, short strings with few distinct values (`read.resolve`), `resolvable` forcing it,
    sensitive never."""
    if attr.sensitivity or attr.resolvable is False:
        return False
    if attr.resolvable is True or attr.type == "enum":
        return True
    if attr.type != "string":
        return False
    return len(distinct) <= limits.max_indexed_values and all(
        len(v) <= limits.max_value_chars for v, _ in distinct
    )


def values_read(kind: Any, name: str, limits: ResolveLimits) -> int | None:
    """How many distinct values resolve reads of the Attribute `name` of `kind` (None: it reads none), for a
    caller who may read it: enums and strings that are not sensitive nor `resolvable: false` (a
    Kind's one key only when `resolvable`, it grounds to its Record otherwise), up to
    `max_indexed_values` (1,000 when `resolvable`), and the Kind's title up to `max_title_values`."""
    attr = kind.attributes[name]
    limit = limits.max_indexed_values
    wanted = (
        not attr.sensitivity
        and attr.resolvable is not False
        and attr.type in ("enum", "string")
        and (attr.resolvable is True or kind.key != (name,))
    )
    most = max(limit, 1000 if attr.resolvable else limit) if wanted else 0
    title = (
        name == kind.title and not attr.sensitivity and attr.type == "string" and attr.resolvable is not False
    )
    if title:
        most = max(most, limits.max_title_values)
    return most if wanted or title else None
