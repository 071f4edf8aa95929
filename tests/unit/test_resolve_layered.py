"""Property: the layered map and set of the title index (resolve/layered.py) answer as a dict and a
set made by the same changes, across folds, and an earlier version never sees a later change."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lorebase_keeper.reads.resolve.layered import LayeredMap, LayeredSet

items = st.integers(0, 400)
changes = st.lists(st.tuples(st.lists(items, max_size=30), st.lists(items, max_size=30)), max_size=40)


@settings(max_examples=60)
@given(start=st.sets(items, max_size=300), steps=changes)
def test_layered_set_is_the_set(start: set[int], steps: list[tuple[list[int], list[int]]]) -> None:
    versions = [(LayeredSet(frozenset(start)), set(start))]
    for add, remove in steps:
        layered, plain = versions[-1]
        versions.append((layered.changed(add, remove), (plain - set(remove)) | set(add)))
    for layered, plain in versions:
        assert len(layered) == len(plain)
        assert set(layered) == plain
        assert layered == plain
        assert all((i in layered) == (i in plain) for i in range(401))


@settings(max_examples=60)
@given(start=st.dictionaries(items, items, max_size=300), steps=changes)
def test_layered_map_is_the_dict(start: dict[int, int], steps: list[tuple[list[int], list[int]]]) -> None:
    versions = [(LayeredMap(dict(start)), dict(start))]
    for put, drop in steps:
        layered, plain = versions[-1]
        now = {k: v for k, v in plain.items() if k not in drop}
        now.update({k: k * 7 for k in put})
        versions.append((layered.changed({k: k * 7 for k in put}, drop), now))
    for layered, plain in versions:
        assert len(layered) == len(plain)
        assert dict(layered.items()) == plain
        assert all((k in layered) == (k in plain) and layered.get(k) == plain.get(k) for k in range(401))
