"""The analyst questions (examples/analyst): the model-free reference agent answers them through
resolve -> query -> coverage -> explain on the supply example and the generated fleet Domain, and
at least 95% are right; every miss is one docs/resolve.md explains (issue 16). The compositional
set (issue 31) is scored on its own too."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from examples.analyst.agent import answer
from examples.analyst.domains import GENERATED
from examples.analyst.expected import compositional, energy_data, fleet_data, questions
from examples.analyst.expected import supply as supply_data
from tests.integration.conftest import Stack

QUESTIONS = Path(__file__).resolve().parents[2] / "examples" / "analyst" / "questions.json"
# Questions the agent gets wrong, each explained in docs/resolve.md ("Remaining misses").
KNOWN_MISSES = {
    # "open flags" is the name of Supplier.open_flags, so the words are that Attribute, not RiskFlags
    # whose status is open: no Kind is named, the agent reads nothing.
    "How many open flags are there?",
}


async def load_generated(stack: Stack) -> None:
    """The generated Domains of examples/analyst (fleet, energy), each created and imported."""
    for name, module in GENERATED.items():
        created = await stack.http.post(
            "/api/v1/domains", json={"name": name, "schema": module.SCHEMA}, headers=stack.admin
        )
        assert created.status_code == 201, created.text
        imported = await stack.http.post(
            f"/api/v1/domains/{name}/imports",
            json={"source": "examples/analyst", **module.data()},
            headers=stack.admin,
        )
        assert imported.status_code == 200, imported.text


def test_the_expected_answers_are_those_the_script_computes() -> None:
    assert json.loads(QUESTIONS.read_text()) == questions(), "run: python -m examples.analyst.expected"
    assert len(questions()) >= 40
    assert {q["domain"] for q in questions()} == {"supply", "fleet", "energy"}
    # issue 31: at least 30 compositional questions over its six classes, on the three Domains;
    # at least 15 on energy, a field of its own
    asked = compositional(supply_data(), fleet_data(), energy_data())
    assert len(asked) >= 30 and {d for d, _, _ in asked} == {"supply", "fleet", "energy"}
    assert len([d for d, _, _ in asked if d == "energy"]) >= 15


async def test_the_reference_agent_answers_the_questions(supply: Stack) -> None:
    await load_generated(supply)
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
    asked = {q for _, q, _ in compositional(supply_data(), fleet_data(), energy_data())}
    missed = asked & set(wrong)
    print(f"compositional questions: {len(asked) - len(missed)} of {len(asked)} right")
    assert set(wrong) == KNOWN_MISSES, json.dumps(wrong)
    assert share >= 0.95
