"""The analyst questions in `make bench` (issue 16): the model-free reference agent
(examples/analyst/agent.py) answers every question of examples/analyst/questions.json through
resolve -> query -> coverage -> explain, on the supply example `make bench` starts with (before
its write measures change it) and on the generated fleet and energy Domains it loads here. Reports
the share answered correctly, the compositional set's score (issue 31) and the median of the
response bytes the agent read per question (target: at least 95% right)."""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path

import httpx

from examples.analyst.agent import answer
from examples.analyst.domains import GENERATED
from examples.analyst.expected import compositional, energy_data, fleet_data, supply

QUESTIONS = Path(__file__).resolve().parent.parent / "examples" / "analyst" / "questions.json"


async def _run(base: str, headers: dict[str, str]) -> tuple[int, int, float, list[str]]:
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
        for name, module in GENERATED.items():
            created = await client.post("/api/v1/domains", json={"name": name, "schema": module.SCHEMA})
            assert created.status_code in (201, 409), created.text
            if created.status_code == 201:
                imported = await client.post(
                    f"/api/v1/domains/{name}/imports", json={"source": "examples/analyst", **module.data()}
                )
                assert imported.status_code == 200, imported.text
        questions = json.loads(QUESTIONS.read_text())
        right, sizes, wrong = 0, [], []
        for item in questions:
            found, log = await answer(client, item["domain"], item["question"])
            sizes.append(log.response_bytes)
            if found == item["expected"]:
                right += 1
            else:
                wrong.append(item["question"])
        return right, len(questions), statistics.median(sizes), wrong


def measure(base: str, headers: dict[str, str]) -> list[str]:
    right, total, median_bytes, wrong = asyncio.run(_run(base, headers))
    share = right / total
    asked = [q for _, q, _ in compositional(supply(), fleet_data(), energy_data())]
    composed = len([q for q in asked if q not in wrong])
    line = (
        f"- analyst questions (examples/analyst, reference agent without a model): {right} of {total} "
        f"right ({share:.1%}; target >= 95%: {'met' if share >= 0.95 else 'missed'}), "
        f"median {median_bytes:.0f} response bytes per question"
    )
    composed_line = (
        f"- compositional analyst questions (issue 31: comparatives, superlatives, counts, states, dates): "
        f"{composed} of {len(asked)} right ({composed / len(asked):.1%}; target >= 95%: "
        f"{'met' if composed >= 0.95 * len(asked) else 'missed'})"
    )
    return [line, composed_line] + [f"  - missed: {q}" for q in wrong]


__all__ = ["measure"]
