"""What Keeper's resolve and Scribe's suggestions both need of a Domain's vocabulary: trigram
similarity exactly as pg_trgm computes it, and which Attributes have their values indexed."""

from __future__ import annotations

import re
from typing import Any

from lorebase.settings_model import ResolveLimits

__all__ = ["indexed", "similarity", "trigrams"]


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
