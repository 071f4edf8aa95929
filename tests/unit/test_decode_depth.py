"""The body's free-form check (lorebase.contract.decode): with the body's bytes and no NUL escape in
them, a level-by-level depth walk answers what the full walk with paths answers."""

from __future__ import annotations

import msgspec
from hypothesis import given as for_all
from hypothesis import strategies as st

from lorebase.contract.decode import _brackets_within, _free_form_fault
from lorebase.contract.writes import ImportBatch

_DOCUMENT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="ab\x00"),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="k\x00", max_size=2), inner, max_size=3)
    ),
    max_leaves=30,
)


@for_all(_DOCUMENT, st.integers(min_value=0, max_value=6))
def test_the_depth_walk_agrees_with_the_full_walk(document, limit):
    data = msgspec.json.encode(document)
    assert _free_form_fault(document, limit, data) == _free_form_fault(document, limit)


@for_all(st.lists(_DOCUMENT, max_size=4), st.integers(min_value=0, max_value=8))
def test_the_depth_walk_counts_struct_fields_as_levels(values, limit):
    body = {"records": [{"kind": "Item", "values": {"v": value}} for value in values]}
    data = msgspec.json.encode(body)
    batch = msgspec.json.decode(data, type=ImportBatch)
    assert _free_form_fault(batch, limit, data) == _free_form_fault(batch, limit)


_BRACKETED = st.recursive(
    st.none() | st.integers() | st.text(alphabet='a{}[]"\\', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="{}[]", max_size=2), inner, max_size=3)
    ),
    max_leaves=30,
)


@for_all(_BRACKETED, st.integers(min_value=0, max_value=6))
def test_brackets_inside_strings_never_hide_a_level(document, limit):
    """The bound from the bytes (`_brackets_within`) may send a body to the walk, never past it."""
    data = msgspec.json.encode(document)
    assert _free_form_fault(document, limit, data) == _free_form_fault(document, limit)
    if _brackets_within(data, limit):
        assert _free_form_fault(document, limit) is None
