"""A Domain's settings are checked by the typed settings model: names, types and ranges (issue 12,
item 7; issue 13, point 5). `{"context": {"chars_per_token": 0}}` made every context pack 500."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import text

from tests.integration.conftest import Stack

SCHEMA = {
    "kinds": {"Thing": {"key": ["id"], "attributes": {"id": {"type": "string"}, "name": {"type": "string"}}}}
}


async def create(stack: Stack, name: str, settings: dict[str, Any]) -> Any:
    return await stack.http.post(
        "/api/v1/domains", json={"name": name, "schema": SCHEMA, "settings": settings}, headers=stack.admin
    )


async def test_zero_and_negative_limits_are_refused_with_their_paths(stack: Stack) -> None:
    refused = await create(stack, "things", {"context": {"chars_per_token": 0}})
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["type"].endswith("validation-failed")
    assert [(i["path"], i["rule"]) for i in problem["issues"]] == [
        ("settings.context.chars_per_token", "setting.range")
    ]
    assert "agents.context.chars_per_token must be float > 0.0, not 0" in problem["detail"]
    refused = await create(
        stack,
        "things",
        {
            "context": {"max_budget_tokens": -5, "max_depth": -1},
            "read": {"query": {"max_limit": 0}, "traverse": {"max_records": 0}, "health": {"examples": -1}},
            "feed": {"changed_keys_max": -1},
            "agent_writes": {"branch_mode": "fork", "max_task_length": 0},
        },
    )
    assert refused.status_code == 422, refused.text
    assert {i["path"] for i in refused.json()["issues"]} == {
        "settings.context.max_budget_tokens",
        "settings.context.max_depth",
        "settings.read.query.max_limit",
        "settings.read.traverse.max_records",
        "settings.read.health.examples",
        "settings.feed.changed_keys_max",
        "settings.agent_writes.branch_mode",
        "settings.agent_writes.max_task_length",
    }
    # Values each in range that do not go together: the section is named.
    refused = await create(stack, "things", {"read": {"search": {"max_limit": 10}}})
    assert refused.status_code == 422
    assert [(i["path"], i["rule"]) for i in refused.json()["issues"]] == [
        ("settings.read.search", "setting.value")
    ]
    assert "lower default_limit" in refused.json()["detail"]
    assert await stack.count("domains") == 0


async def test_a_small_chars_per_token_still_makes_a_context_pack(stack: Stack) -> None:
    created = await create(
        stack, "things", {"context": {"chars_per_token": 0.5, "default_budget_tokens": 100000}}
    )
    assert created.status_code == 201, created.text
    imported = await stack.http.post(
        "/api/v1/domains/things/imports",
        json={"records": [{"kind": "Thing", "values": {"id": "t1", "name": "A thing"}}]},
        headers=stack.admin,
    )
    assert imported.status_code == 200, imported.text
    pack = await stack.http.post(
        "/api/v1/domains/things/context", json={"refs": ["Thing/t1"]}, headers=stack.admin
    )
    assert pack.status_code == 200, pack.text
    budget = pack.json()["budget"]
    seeds = orjson.dumps(pack.json()["seeds"]).decode()
    assert budget["chars_per_token"] == 0.5 and budget["sections"]["seeds"] == len(seeds) * 2


async def test_a_stored_invalid_override_is_left_out(stack: Stack) -> None:
    """A Domain stored before ranges were checked: its bad value is ignored, not a 500."""
    assert (await create(stack, "things", {"context": {"max_seeds": 10}})).status_code == 201
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text("update domains set settings = :s where name = 'things'"),
            {"s": orjson.dumps({"agents": {"context": {"chars_per_token": 0, "max_seeds": 10}}}).decode()},
        )
    stack.rt.domains.forget()
    await stack.http.post(
        "/api/v1/domains/things/imports",
        json={"records": [{"kind": "Thing", "values": {"id": "t1", "name": "A thing"}}]},
        headers=stack.admin,
    )
    pack = await stack.http.post(
        "/api/v1/domains/things/context", json={"refs": ["Thing/t1"]}, headers=stack.admin
    )
    assert pack.status_code == 200, pack.text
    assert pack.json()["budget"]["chars_per_token"] == 4.0  # the process setting
    domain = await stack.rt.domains.get("things")
    assert domain.settings.get("agents.context.max_seeds") == 10  # the valid override stays
