"""The analyst questions (examples/analyst): the model-free reference agent answers them through
resolve -> query -> coverage -> explain on the supply example and the generated fleet Domain, and
at least 95% are right; every miss is one docs/resolve.md explains (issue 16)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from examples.analyst import fleet
from examples.analyst.agent import answer
from examples.analyst.expected import compositional, fleet_data, questions
from examples.analyst.expected import supply as supply_data
from tests.integration.conftest import Stack

QUESTIONS = Path(__file__).resolve().parents[2] / "examples" / "analyst" / "questions.json"
# Questions the agent gets wrong, each explained in docs/resolve.md ("Remaining misses").
KNOWN_MISSES = {
    # "open flags" is the name of Supplier.open_flags, so the words are that Attribute, not RiskFlags
    # whose status is open: no Kind is named, the agent reads nothing.
    "How many open flags are there?",
}


async def load_fleet(stack: Stack) -> None:
    created = await stack.http.post(
        "/api/v1/domains", json={"name": "fleet", "schema": fleet.SCHEMA}, headers=stack.admin
    )
    assert created.status_code == 201, created.text
    imported = await stack.http.post(
        "/api/v1/domains/fleet/imports",
        json={"source": "examples/analyst", **fleet.data()},
        headers=stack.admin,
    )
    assert imported.status_code == 200, imported.text


def test_the_expected_answers_are_those_the_script_computes() -> None:
    assert json.loads(QUESTIONS.read_text()) == questions(), "run: python -m examples.analyst.expected"
    assert len(questions()) >= 40
    assert {q["domain"] for q in questions()} == {"supply", "fleet"}
    # issue 31: at least 30 compositional questions over its six classes, on both Domains
    asked = compositional(supply_data(), fleet_data())
    assert len(asked) >= 30 and {d for d, _, _ in asked} == {"supply", "fleet"}


async def test_the_reference_agent_answers_the_questions(supply: Stack) -> None:
    await load_fleet(supply)
    supply.http.headers.update(supply.admin)
    wrong: dict[str, tuple[object, object]] = {}
    sizes = []
    for item in json.loads(QUESTIONS.read_text()):
        found, log = await answer(supply.http, item["domain"], item["question"])
        sizes.append(log.response_bytes)
        assert log.calls[0][1].endswith("/resolve")
        if found != item["expected"]:
            wrong[item["question"]] = (found, item["expected"])
    share = 1 - len(wrong) / len(sizes)
    print(f"analyst questions: {share:.1%} right, median {statistics.median(sizes)} response bytes")
    assert set(wrong) == KNOWN_MISSES, json.dumps(wrong)
    assert share >= 0.95
