"""Helpers of the agent memory tests: grants, commands and catch-up reads over REST."""

from __future__ import annotations

import itertools
from typing import Any

from tests.integration.conftest import Stack

SCOPE: dict[str, Any] = {
    "project_id": "proj",
    "mission_id": None,
    "agent_id": "agent",
    "visibility": "shared",
}
ALL = ["memory_read", "memory_write", "memory_checkpoint"]
_keys = itertools.count()


def key() -> str:
    return f"k-{next(_keys)}"


async def agent(
    stack: Stack, principal: str, capabilities: list[str] | None = None, **scope: Any
) -> dict[str, str]:
    """A principal holding `capabilities` (default all) on SCOPE (or the scope given)."""
    headers = await stack.principal(principal, type="service")
    grant_scope = {k: v for k, v in {**SCOPE, **scope}.items() if k != "visibility"}
    response = await stack.http.post(
        "/api/v1/memory/grants",
        json={"principal": principal, "scope": grant_scope, "capabilities": capabilities or ALL},
        headers=stack.admin,
    )
    assert response.status_code == 201, response.text
    return headers


async def create(stack: Stack, headers: dict[str, str], content: Any = "note", **body: Any) -> dict[str, Any]:
    body.setdefault("scope", SCOPE)
    response = await stack.http.post(
        "/api/v1/memory/records", json={"content": content, "idempotency_key": key(), **body}, headers=headers
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def changes(
    stack: Stack, headers: dict[str, str], version: int = 1, scope: Any = None, **query: Any
) -> Any:
    return await stack.http.post(
        "/api/v1/memory/changes",
        json={"contract_version": version, "scope": scope or SCOPE, "query": query},
        headers=headers,
    )


async def catch_up(
    stack: Stack, headers: dict[str, str], after: Any = None, limit: int = 256, version: int = 1
) -> tuple[list[dict[str, Any]], Any]:
    """The seed's protocol: fence at the first page's high_watermark, follow next_cursor to complete."""
    seen: list[dict[str, Any]] = []
    through = None
    while True:
        response = await changes(stack, headers, version, after=after, through=through, limit=limit)
        assert response.status_code == 200, response.text
        page = response.json()
        seen += page["entries"]
        if through is None:
            through = page["high_watermark"]
        if page["next_cursor"] is not None:
            after = page["next_cursor"]
        if page["complete"]:
            return seen, after
