"""How analysts compare and rank, on the supply example, asked as written (issue 31): number words,
comparatives, superlatives and top-k, verbs of state, counts of related Records, dates as people
say them. Resolve grounds the words; the reference agent (examples/analyst/agent.py) answers."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack
from tests.integration.test_resolve_classes import named, resolve


async def test_number_words_are_numbers_and_never_start_a_name(supply: Stack) -> None:
    whole = await resolve(supply, "what does the Three-phase induction motor cost")
    motor = named(whole, "record", kind="Part")
    assert (
        motor and motor[0]["level"] in ("exact", "prefix") and motor[0]["matched"].startswith("three-phase")
    )
    spaced = await resolve(supply, "unit cost of the three phase induction motor")
    assert named(spaced, "record", kind="Part"), "the beginning of the name, written whole"
    top = await resolve(supply, "the three parts with a unit cost above twenty")
    assert not named(top, "record"), "three is a number, not the start of a Part's name"
    assert [c["predicate"] for c in named(top, "comparison", kind="Part")] == [
        {"attr": "unit_cost", "op": "gt", "value": "20.00"}
    ]
    assert "three" not in top["coverage"]["unknown"]


def _ids(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["target"], c["matched"]) for c in body["candidates"]]
