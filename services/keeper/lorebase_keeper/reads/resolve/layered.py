"""Immutable maps and sets that share their bulk with the version they were made from.

The title index of a Kind holds every title by word: 100,000 titles and as many words at the
bench's size, and a word like "part" held by all of them. A commit that renames one Record must give
the next head an index with that one title moved, while a resolve still running at the previous
head (a request awaits the database between its steps) keeps reading the previous one. Copying the
index per commit costs milliseconds; these structures cost the change: a new version is the old
one's bulk (shared, never changed again) under a small layer of changes, folded into a new bulk once
the layer has grown past a few times the square root of its size (so a change costs about that
much, and a long run of commits a copy of the bulk now and then).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
_GONE = object()


def _folds(layer: int, bulk: int) -> bool:
    """Fold a layer into a new bulk once it outgrows 4 x sqrt(bulk): each change then copies at
    most that much, and a fold (a copy of the bulk) comes every ~sqrt(bulk) changes."""
    return layer > 64 and layer * layer > 16 * bulk


class LayeredSet(Generic[K]):
    """A frozen set: `bulk` (shared) with `added` and `removed` (disjoint; removed within bulk)."""

    __slots__ = ("_added", "_bulk", "_removed")

    def __init__(
        self, bulk: frozenset[K], added: frozenset[K] = frozenset(), removed: frozenset[K] = frozenset()
    ) -> None:
        self._bulk, self._added, self._removed = bulk, added, removed

    def __contains__(self, item: object) -> bool:
        return item in self._added or (item in self._bulk and item not in self._removed)

    def __len__(self) -> int:
        return len(self._bulk) - len(self._removed) + len(self._added)

    def __iter__(self) -> Iterator[K]:
        removed = self._removed
        yield from (item for item in self._bulk if item not in removed) if removed else self._bulk
        yield from self._added

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LayeredSet):
            other = set(other)
        return (
            isinstance(other, (set, frozenset)) and len(self) == len(other) and all(i in self for i in other)
        )

    __hash__ = None  # type: ignore[assignment]

    def changed(self, add: Iterable[K] = (), remove: Iterable[K] = ()) -> LayeredSet[K]:
        added, removed = set(self._added), set(self._removed)
        for item in remove:
            if item in added:
                added.discard(item)
            elif item in self._bulk:
                removed.add(item)
        for item in add:
            if item in removed:
                removed.discard(item)
            elif item not in self._bulk:
                added.add(item)
        if _folds(len(added) + len(removed), len(self._bulk)):
            return LayeredSet(frozenset(i for i in self._bulk if i not in removed) | added)
        return LayeredSet(self._bulk, frozenset(added), frozenset(removed))


class LayeredMap(Mapping[K, V]):
    """A frozen map: `bulk` (shared, never changed) under `layer` (key -> value, or gone)."""

    __slots__ = ("_bulk", "_layer", "_len")

    def __init__(
        self, bulk: dict[K, V], layer: dict[K, object] | None = None, length: int | None = None
    ) -> None:
        self._bulk, self._layer = bulk, layer or {}
        self._len = len(bulk) if length is None else length

    def __getitem__(self, key: K) -> V:
        found = self._layer.get(key, self)
        if found is self:
            return self._bulk[key]
        if found is _GONE:
            raise KeyError(key)
        return found  # type: ignore[return-value]

    def __contains__(self, key: object) -> bool:
        found = self._layer.get(key, self)  # type: ignore[arg-type]
        return key in self._bulk if found is self else found is not _GONE

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        layer = self._layer
        yield from (k for k in self._bulk if k not in layer or layer[k] is not _GONE)
        yield from (k for k, v in layer.items() if v is not _GONE and k not in self._bulk)

    def changed(self, put: Mapping[K, V], drop: Iterable[K] = ()) -> LayeredMap[K, V]:
        """A new version with `put` set and `drop` removed."""
        layer = dict(self._layer)
        length = self._len

        def present(key: K) -> bool:
            found = layer.get(key, layer)
            return key in self._bulk if found is layer else found is not _GONE

        for key in drop:
            if present(key):
                length -= 1
                layer[key] = _GONE
        for key, value in put.items():
            if not present(key):
                length += 1
            layer[key] = value
        if _folds(len(layer), len(self._bulk)):
            bulk = {k: v for k, v in self._bulk.items() if k not in layer}
            bulk.update((k, v) for k, v in layer.items() if v is not _GONE)  # type: ignore[misc]
            return LayeredMap(bulk)
        return LayeredMap(self._bulk, layer, length)


__all__ = ["LayeredMap", "LayeredSet"]
