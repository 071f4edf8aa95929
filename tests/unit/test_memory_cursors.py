"""Memory journal cursors: round trips, and any other value is a 400 problem, never another error.

A cursor's shape is its model's (lorebase.contract.memory.journal.JournalPosition, decoded with the
changes body as the gateway and feed decode it); its version is parse_cursor's."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebase.contract import BY_NAME
from lorebase.contract.decode import decode_body
from lorebase.contract.memory.journal import ChangesBody, JournalPosition
from lorebase.memory import MAX_SEQUENCE, chain_digest, cursor_document, genesis_digest, parse_cursor
from lorebase.problems import Problem

JOURNAL = "jrn_01ABCDEFGHJKMNPQRSTVWXYZ01"
SCOPE = {"project_id": "p", "mission_id": None, "agent_id": "a", "visibility": "shared"}


def _page(after: Any, version: int) -> bytes:
    return msgspec.json.encode({"contract_version": version, "scope": SCOPE, "query": {"after": after}})


@given(st.integers(0, MAX_SEQUENCE), st.sampled_from([1, 2]), st.booleans())
def test_a_returned_cursor_parses_back(sequence: int, version: int, as_text: bool) -> None:
    digest = chain_digest(genesis_digest(JOURNAL), sequence, "0" * 64)
    document = cursor_document(JOURNAL, sequence, digest, version)
    if as_text:  # a decimal string is accepted too (docs/memory.md)
        document["sequence"] = str(sequence)
    body = decode_body(BY_NAME["read_memory_changes"], _page(document, version))
    assert isinstance(body, ChangesBody)
    cursor = parse_cursor(body.query.after, "query.after", version)
    assert cursor is not None and cursor.journal_id == JOURNAL and cursor.sequence == sequence
    assert cursor.prefix_digest == (digest if version == 2 else None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)  # no timing: a loaded machine must not fail it
@given(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {
                "journal_id": st.one_of(st.just(JOURNAL), json_values),
                "sequence": st.one_of(
                    st.integers(-(2**70), 2**70), st.integers(0, 2**70).map(str), json_values
                ),
            },
            optional={"prefix_digest": st.one_of(st.just("a" * 64), json_values)},
        ),
    ),
    st.sampled_from([1, 2]),
)
def test_anything_else_is_a_400(value: Any, version: int) -> None:
    try:
        body = decode_body(BY_NAME["read_memory_changes"], _page(value, version))
        cursor = parse_cursor(body.query.after, "query.after", version)
    except Problem as problem:
        assert problem.status == 400, problem.document()
        return
    assert cursor is None or 0 <= cursor.sequence <= MAX_SEQUENCE


@pytest.mark.parametrize("sequence", [-1, MAX_SEQUENCE + 1, "18446744073709551616", "1e3", " 1", True, 1.0])
def test_a_sequence_outside_64_bits_is_refused_by_the_model(sequence: Any) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"journal_id": JOURNAL, "sequence": sequence}, JournalPosition, strict=True)


def test_version_2_needs_a_prefix_digest() -> None:
    position = JournalPosition(journal_id=JOURNAL, sequence=3)
    with pytest.raises(Problem, match="prefix-anchored") as raised:
        parse_cursor(position, "query.after", 2)
    assert (raised.value.status, raised.value.code) == (400, "invalid-cursor")
    assert parse_cursor(position, "query.after", 1) is not None  # version 1 is sequence-only


def test_the_chain_depends_on_every_entry() -> None:
    one = chain_digest(genesis_digest(JOURNAL), 1, "a" * 64)
    assert chain_digest(one, 2, "b" * 64) != chain_digest(
        chain_digest(genesis_digest(JOURNAL), 1, "c" * 64), 2, "b" * 64
    )
