"""Memory journal cursors: round trips, and any other value is a 400 problem, never another error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebase.memory import MAX_SEQUENCE, chain_digest, cursor_document, genesis_digest, parse_cursor
from lorebase.problems import Problem

JOURNAL = "jrn_01ABCDEFGHJKMNPQRSTVWXYZ01"


@given(st.integers(0, MAX_SEQUENCE), st.sampled_from([1, 2]))
def test_a_returned_cursor_parses_back(sequence: int, version: int) -> None:
    digest = chain_digest(genesis_digest(JOURNAL), sequence, "0" * 64)
    cursor = parse_cursor(cursor_document(JOURNAL, sequence, digest, version), "after", version)
    assert cursor is not None and cursor.journal_id == JOURNAL and cursor.sequence == sequence
    assert cursor.prefix_digest == (digest if version == 2 else None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200)
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"journal_id": st.one_of(st.just(JOURNAL), json_values), "sequence": json_values},
            optional={"prefix_digest": json_values},
        ),
    ),
    st.sampled_from([1, 2]),
)
def test_anything_else_is_a_400(value: Any, version: int) -> None:
    try:
        parse_cursor(value, "after", version)
    except Problem as problem:
        assert problem.status == 400 and problem.code == "invalid-cursor"


def test_version_2_needs_a_prefix_digest() -> None:
    with pytest.raises(Problem, match="prefix-anchored"):
        parse_cursor({"journal_id": JOURNAL, "sequence": 3}, "after", 2)


def test_the_chain_depends_on_every_entry() -> None:
    one = chain_digest(genesis_digest(JOURNAL), 1, "a" * 64)
    assert chain_digest(one, 2, "b" * 64) != chain_digest(
        chain_digest(genesis_digest(JOURNAL), 1, "c" * 64), 2, "b" * 64
    )
