"""What the stored values of one Attribute contribute to the resolve vocabulary (a slot): its value
terms (exact: the values; synonym: the schema's value_aliases, with the Records holding them) and,
for a Kind's title Attribute, the title index of the Record level (titles.py).

A slot is made from the Attribute's distinct values at a head (value_counts.py). At the next head
only the values that moved are looked at: a slot whose values did not move is the same object, a
title index is the newest one of its branch and Kind (shared by every caller's vocabulary: it does
not depend on what else the caller may read) with the moved titles put or dropped (layered.py, so a
resolve still reading the previous head keeps its index), and the value terms of an Attribute with
few values (at most `max_indexed_values`, or `resolvable`) are made again. The result is what a fresh build
from the same counts makes: tests/keeper/test_resolve_vocabulary.py holds them equal.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorebase.settings_model import ResolveLimits
from lorebase.vocabulary import indexed
from lorebase_keeper.reads.resolve.layered import LayeredMap, LayeredSet
from lorebase_keeper.reads.resolve.terms import TITLE_WORD, Term, Titles
from lorebase_keeper.reads.resolve.words import is_code
from lorebase_keeper.reads.value_counts import Counts
from lorebase_keeper.writes import Pacer
from lorebase_store import BranchChain

_SHARED = 64  # title indexes kept per process


@dataclass(frozen=True)
class Wanted:
    """An Attribute whose values resolve reads: where its terms rank, and how many values to read."""

    kind_index: int
    attribute_index: int
    kind: str
    name: str
    attr: Any
    limit: int  # distinct values to read (Txn.value_counts' limit)
    title: bool  # the Kind's title Attribute, kept as a title index
    key: str | None  # the Kind's one key Attribute


@dataclass(frozen=True)
class Slot:
    wanted: Wanted
    exact: dict[str, list[Term]] = field(default_factory=dict)
    synonyms: dict[str, list[Term]] = field(default_factory=dict)
    titles: Titles | None = None


async def slot(
    wanted: Wanted,
    values: Mapping[str, int] | list[tuple[str, int]],
    limits: ResolveLimits,
    titles_from: tuple[Titles, set[str]] | None = None,
) -> Slot:
    """The slot of `wanted` for these distinct values (a mapping, or the (value, Records) pairs a
    count answered); a title index from `titles_from` (an index and the titles moved since it). A
    title index made from every value (100,000 titles: half a second) is made in slices of the
    event loop (lorebase_keeper.writes.pace)."""
    attr = wanted.attr
    pairs: list[tuple[str, int]] | None = None
    if isinstance(values, list):
        pairs = values
    titles = None
    if wanted.title:
        size = len(pairs) if pairs is not None else len(values)  # kept counts hold no zeros
        if size <= limits.max_title_values:
            titles = await _titles(wanted, pairs if pairs is not None else values, titles_from)
        if attr.resolvable is not True:
            return Slot(wanted, titles=titles)
    if pairs is None:
        pairs = sorted((v, n) for v, n in values.items() if n > 0)[: wanted.limit + 1]  # type: ignore[union-attr]
    exact: dict[str, list[Term]] = {}
    synonyms: dict[str, list[Term]] = {}
    if indexed(attr, pairs[: limits.max_indexed_values + 1], limits):
        counts = dict(pairs)
        rank = (wanted.kind_index, wanted.attribute_index, 2)
        for value, records in pairs:
            term = Term(
                "value",
                wanted.kind,
                wanted.name,
                attr.type_name,
                {value: records},
                code=is_code(value, limits),
                written=value,
                rank=(*rank, value),
            )
            exact.setdefault(value.casefold().strip(), []).append(term)
        for stored_index, (stored, aliases) in enumerate(attr.value_aliases.items()):
            for alias_index, alias in enumerate(aliases):
                term = Term(
                    "value",
                    wanted.kind,
                    wanted.name,
                    attr.type_name,
                    {stored: counts.get(stored, 0)},
                    code=is_code(alias, limits),
                    written=alias,
                    rank=(wanted.kind_index, wanted.attribute_index, 3, stored_index, alias_index),
                )
                synonyms.setdefault(alias.casefold().strip(), []).append(term)
    return Slot(wanted, exact, synonyms, titles)


# The newest title index of each branch, Kind and title Attribute, whichever caller's vocabulary made
# it: a caller's view decides whether its vocabulary has the index, not what the index holds.
_TITLE_INDEXES: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], int, Titles]] = OrderedDict()


def titles_from(
    shared: tuple[Any, ...], head: tuple[BranchChain, int], found: Counts
) -> tuple[Titles, set[str]] | None:
    """The shared index of this title Attribute and the titles moved since it, when it can be
    brought to this head (same chain, not newer, the counts' log reaching back to it)."""
    known = _TITLE_INDEXES.get(shared)
    if known is None or known[0] != head[0].segments or known[1] > head[1]:
        return None
    moved = found.moved_since(known[1])
    return None if moved is None else (known[2], moved)


def share_titles(shared: tuple[Any, ...], head: tuple[BranchChain, int], titles: Titles) -> None:
    known = _TITLE_INDEXES.get(shared)
    if known is None or known[0] != head[0].segments or known[1] <= head[1]:
        _TITLE_INDEXES[shared] = (head[0].segments, head[1], titles)
        _TITLE_INDEXES.move_to_end(shared)
        if len(_TITLE_INDEXES) > _SHARED:
            _TITLE_INDEXES.popitem(last=False)


def _words(title: str) -> set[str]:
    return set(TITLE_WORD.findall(title.casefold()))


async def _titles(
    wanted: Wanted,
    values: Mapping[str, int] | list[tuple[str, int]],
    titles_from: tuple[Titles, set[str]] | None,
) -> Titles:
    """The title index: the given one with the moved titles changed, or one from every value."""
    if titles_from is not None and isinstance(values, Mapping):
        before, moved = titles_from
        if not moved:
            return before
        put: dict[str, int] = {}
        drop: list[str] = []
        added: dict[str, list[str]] = {}
        removed: dict[str, list[str]] = {}
        for title in sorted(moved):
            records = values.get(title, 0)
            held = title in before.records
            if records > 0:
                put[title] = records
                if not held:
                    for word in _words(title):
                        added.setdefault(word, []).append(title)
            elif held:
                drop.append(title)
                for word in _words(title):
                    removed.setdefault(word, []).append(title)
        words_put: dict[str, LayeredSet[str]] = {}
        words_drop: list[str] = []
        for word in sorted(added.keys() | removed.keys()):
            known = before.words.get(word)
            now = (known or LayeredSet(frozenset())).changed(added.get(word, ()), removed.get(word, ()))
            if len(now):
                words_put[word] = now
            elif known is not None:
                words_drop.append(word)
        return Titles(
            wanted.kind,
            wanted.name,
            wanted.key,
            _layered(before.records).changed(put, drop),
            _layered(before.words).changed(words_put, words_drop),
        )
    pairs = values if isinstance(values, list) else [(v, n) for v, n in values.items() if n > 0]
    held_by = dict(pairs)
    words: dict[str, set[str]] = {}
    pacer = Pacer()
    for title in held_by:
        for word in _words(title):
            words.setdefault(word, set()).add(title)
        await pacer.step()
    return Titles(
        wanted.kind,
        wanted.name,
        wanted.key,
        LayeredMap(held_by),
        LayeredMap({word: LayeredSet(frozenset(held)) for word, held in words.items()}),
    )


def _layered(mapping: Mapping[Any, Any]) -> LayeredMap[Any, Any]:
    return mapping if isinstance(mapping, LayeredMap) else LayeredMap(dict(mapping))


__all__ = ["Slot", "Wanted", "share_titles", "slot", "titles_from"]
