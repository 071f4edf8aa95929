"""Memory calls count against the principal's rate limits like Domain calls: keeper's MemoryStore
(record writes and grants in the writes class, reads and queries in the reads class) and feed's
MemoryJournal (change pages and checkpoint reads, checkpoint saves and deletes)."""

from __future__ import annotations

from typing import Any

import httpx

from lorebase.rate_limits import Limit
from tests.integration.conftest import Stack
from tests.integration.memory_helpers import SCOPE, agent, create, key


def assert_limited(response: httpx.Response, rate_class: str) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["code"] == "rate-limited" and response.json()["rate_class"] == rate_class
    assert int(response.headers["Retry-After"]) >= 1
    assert response.headers["Cache-Control"] == "no-store"


async def test_memory_calls_answer_429_with_retry_after(stack: Stack) -> None:
    assert stack.rt.limits is not None  # keeper's, which the stack's memory journal shares
    writer = await agent(stack, "agt_writer")
    record = (await create(stack, writer))["record"]
    # Tight limits for the principals seen from now on (their buckets start full: the burst).
    stack.rt.limits.limits.update({"reads": Limit(0.01, 2), "writes": Limit(0.01, 2)})
    agent_headers = await agent(stack, "agt_busy")

    for _ in range(2):
        await create(stack, agent_headers)
    refused = await stack.http.post(
        "/api/v1/memory/records",
        json={"content": "one too many", "scope": SCOPE, "idempotency_key": key()},
        headers=agent_headers,
    )
    assert_limited(refused, "writes")

    path = f"/api/v1/memory/records/{record['record_id']}"
    assert (await stack.http.get(path, headers=agent_headers)).status_code == 200
    query: dict[str, Any] = {"scope": SCOPE}
    assert (
        await stack.http.post("/api/v1/memory/query", json=query, headers=agent_headers)
    ).status_code == 200
    assert_limited(await stack.http.get(path, headers=agent_headers), "reads")
    changes = {"contract_version": 1, "scope": SCOPE, "query": {}}
    assert_limited(
        await stack.http.post("/api/v1/memory/changes", json=changes, headers=agent_headers), "reads"
    )
    assert_limited(await stack.http.get("/api/v1/memory/checkpoints/c-1", headers=agent_headers), "reads")

    # The admin is not limited; another principal has buckets of its own.
    assert (await stack.http.get(path, headers=stack.admin)).status_code == 200
    assert (await stack.http.get(path, headers=writer)).status_code == 200


async def test_journal_writes_count_in_the_writes_class(stack: Stack) -> None:
    assert stack.rt.limits is not None
    stack.rt.limits.limits.update({"reads": Limit(0.01, 100), "writes": Limit(0.01, 1)})
    consumer = await agent(stack, "agt_consumer")
    page = await stack.http.post(
        "/api/v1/memory/changes", json={"contract_version": 1, "scope": SCOPE, "query": {}}, headers=consumer
    )
    assert page.status_code == 200, page.text
    path = "/api/v1/memory/checkpoints/c-1"
    # A cursor of the right shape (a body that does not fit is refused at the edge, before feed
    # charges anything); feed charges the save, then finds the journal is not this scope's (409).
    cursor = {"journal_id": "jrn_" + "A" * 26, "sequence": 0}
    body = {"contract_version": 1, "scope": SCOPE, "cursor": cursor, "revision": 0}
    first = await stack.http.put(path, json=body, headers=consumer)
    assert first.status_code != 429, first.text
    assert_limited(await stack.http.put(path, json=body, headers=consumer), "writes")
