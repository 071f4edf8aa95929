"""The entries of the resolve vocabulary: Terms (what a phrase can mean) and a Kind's title index."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorebase_keeper.reads.resolve.layered import LayeredSet

TITLE_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Term:
    """Something a phrase can mean: a Kind, an Attribute (of a Kind, or of a Relation's Links), a
    Relation, or stored values of an Attribute."""

    target: str  # kind | attribute | relation | value
    kind: str
    attribute: str | None = None
    type: str | None = None
    values: dict[str, int] = field(default_factory=dict)  # stored value -> Records
    relation: str | None = None
    to: str | None = None  # relation: the Kind at the other end
    inverse: str | None = None  # relation: its name read from the other end
    code: bool = False  # a value (or alias) that matches only as written
    written: str = ""  # the spelling a code must have
    cover: float = 1.0  # partial: the share of the name the phrase covers
    description: str = ""
    # Where the Term stands among those of its word: the order a build adds them in (Kind, Attribute,
    # then names, values, value aliases), so a vocabulary updated per commit lists them as a new one.
    rank: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Titles:
    """The titles of one Kind's Records, by word, and how to find a Record from its title."""

    kind: str
    attribute: str
    key: str | None
    records: Mapping[str, int]  # title -> Records holding it
    words: Mapping[str, LayeredSet[str]]  # word -> titles holding it


__all__ = ["TITLE_WORD", "Term", "Titles"]
