"""What Keeper's resolve and Scribe's suggestions both need of a Domain's vocabulary: trigram
similarity exactly as pg_trgm computes it, and which Attributes have their values indexed."""

from __future__ import annotations

import re
from typing import Any

from lorebase.settings_model import ResolveLimits

__all__ = ["TOKEN", "indexed", "similarity", "trigrams", "words_of"]

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
