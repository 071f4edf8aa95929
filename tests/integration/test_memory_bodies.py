"""Keeper's MemoryStore and feed's MemoryJournal decode each memory body with its endpoint's model
(lorebase.contract.memory), as the gateway does at the edge: a gRPC caller that skips the gateway
gets the same problem as a REST caller, member by member (test_keeper_bodies.py does the same for
the Domain endpoints).

Each case sends the same bad bytes twice, over REST and straight to the service over gRPC (the
generic call of lorebase.clients), and the two problem documents must be equal; the status is the
endpoint's (422 for commands and grants, 400 for the query, the journal and checkpoints). Cases
whose body fits its model but breaks a rule keeper checks itself (a null content, a missing key)
show that layer answering alike too. Nothing refused reaches the journal.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest

from lorebase.contract import BY_NAME
from lorebase.problems import Problem
from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.memory_helpers import SCOPE, agent, create

M = "/api/v1/memory"
GRANT_SCOPE = {k: v for k, v in SCOPE.items() if k != "visibility"}
CURSOR = {"journal_id": "jrn_" + "A" * 26, "sequence": 1}

# (endpoint, its parameters, REST method and path, body, the status)
CASES: list[tuple[str, dict[str, Any], str, str, Any, int]] = [
    (
        "create_memory",
        {},
        "POST",
        M + "/records",
        {"scope": {**SCOPE, "visibility": "team", "project_id": "-p"}, "content": 1, "extra": 1},
        422,
    ),
    ("create_memory", {}, "POST", M + "/records", {"scope": SCOPE, "content": None}, 422),  # keeper's rules
    ("create_memory", {}, "POST", M + "/records", b"[1]", 400),
    # NUL in a member name or a string of the free-form content (PostgreSQL refuses it in JSON).
    ("create_memory", {}, "POST", M + "/records", {"scope": SCOPE, "content": {"a\u0000b": 1}}, 422),
    ("create_memory", {}, "POST", M + "/records", {"scope": SCOPE, "content": {"a": ["x\u0000"]}}, 422),
    (
        "derive_memory",
        {},
        "POST",
        M + "/derivations",
        {"scope": SCOPE, "content": 1, "derived_from": [], "idempotency_key": ""},
        422,
    ),
    (
        "update_memory",
        {"record_id": "mem_x"},
        "PATCH",
        M + "/records/mem_x",
        {"record_revision": 0, "valid_until_millis": -1, "content": {"a": 1}},
        422,
    ),
    ("delete_memory", {"record_id": "mem_x"}, "DELETE", M + "/records/mem_x", {"record_revision": "1"}, 422),
    (
        "attach_memory_embedding",
        {"record_id": "mem_x"},
        "PUT",
        M + "/records/mem_x/embedding",
        b'{"record_revision": 1, "model": "", "vector": [1, 1e400]}',  # a number past a double's range
        422,
    ),
    (
        "review_memory",
        {"record_id": "mem_x"},
        "POST",
        M + "/records/mem_x/reviews",
        {"decision": "maybe", "reason": "   ", "record_revision": True},
        422,
    ),
    ("query_memory", {}, "POST", M + "/query", {"scope": SCOPE, "limit": 0, "cursor": 5}, 400),
    (
        "create_memory_grant",
        {},
        "POST",
        M + "/grants",
        {
            "principal": "",
            "scope": SCOPE,
            "capabilities": ["memory_admin"],
        },  # a grant's scope has no visibility
        422,
    ),
    (
        "read_memory_changes",
        {},
        "POST",
        M + "/changes",
        {
            "contract_version": 3,
            "scope": SCOPE,
            "query": {"limit": 257, "after": {"journal_id": "jrn_../x", "sequence": -1}},
        },
        400,
    ),
    (
        "read_memory_changes",
        {},
        "POST",
        M + "/changes",
        {"contract_version": 1, "scope": SCOPE, "query": {"after": {**CURSOR, "sequence": 2**64}}},
        400,
    ),
    (
        "save_memory_checkpoint",
        {"consumer": "c-1"},
        "PUT",
        M + "/checkpoints/c-1",
        {"contract_version": 2, "scope": SCOPE, "cursor": None, "revision": -1},
        400,
    ),
    (
        "save_memory_checkpoint",  # the body fits; version 2 needs a prefix-anchored cursor (feed's rule)
        {"consumer": "c-1"},
        "PUT",
        M + "/checkpoints/c-1",
        {"contract_version": 2, "scope": SCOPE, "cursor": CURSOR, "revision": 0},
        400,
    ),
    (
        "save_memory_checkpoint",
        {"consumer": "c-1\n"},
        "PUT",
        M + "/checkpoints/c-1%0A",
        {"contract_version": 1, "scope": SCOPE, "cursor": CURSOR, "revision": 0},
        400,
    ),
    ("delete_memory_checkpoint", {"consumer": "c-1"}, "DELETE", M + "/checkpoints/c-1", {"revision": 0}, 400),
    ("list_memory_checkpoints", {"limit": 257}, "GET", M + "/checkpoints?limit=257", None, 400),
    ("list_memory_checkpoints", {"after": "..", "limit": 100}, "GET", M + "/checkpoints?after=..", None, 400),
]


def _bytes(body: Any) -> bytes | None:
    return body if isinstance(body, bytes) or body is None else msgspec.json.encode(body)


@pytest.mark.parametrize(
    ("endpoint", "values", "method", "path", "body", "status"),
    CASES,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(CASES)],
)
async def test_a_grpc_caller_gets_the_problem_a_rest_caller_gets(
    stack: Stack, endpoint: str, values: dict[str, Any], method: str, path: str, body: Any, status: int
) -> None:
    data = _bytes(body)
    headers = {**stack.admin, "Content-Type": "application/json"}
    response = await stack.http.request(method, path, content=data, headers=headers)
    assert response.status_code == status, response.text
    assert response.headers["cache-control"] == "no-store"
    declared = BY_NAME[endpoint]
    with pytest.raises(Problem) as raised:
        await stack.gateway.client(declared.service).invoke(
            declared, values, data, credential=f"Bearer {ADMIN_KEY}"
        )
    assert raised.value.status == status
    assert raised.value.document() == response.json()
    assert await stack.count("memory_journal_entries") == 0


async def test_each_member_that_does_not_fit_is_an_issue(stack: Stack) -> None:
    """The model names every top-level member at once, with its path inside the member."""
    response = await stack.http.post(
        M + "/changes",
        json={"contract_version": 3, "scope": {**SCOPE, "visibility": "team"}, "query": {"limit": 0}, "x": 1},
        headers=stack.admin,
    )
    assert response.status_code == 400 and response.json()["code"] == "validation-failed"
    assert [(i["path"], i["rule"]) for i in response.json()["issues"]] == [
        ("contract_version", "invalid"),
        ("scope.visibility", "invalid"),
        ("query.limit", "invalid"),
        ("x", "unknown_member"),
    ]


async def test_a_revoked_key_is_401_before_a_bad_body_over_grpc(stack: Stack) -> None:
    """Keeper checks the key before it says a body is wrong, even a body its model refuses; the
    gateway, which cannot know a key is revoked, refuses such a body at the edge (422) as it does
    for every endpoint, and a body that fits goes on to keeper's 401 (test_memory_commit.py)."""
    await stack.principal("agt_gone", type="service")
    issued = await stack.http.post("/api/v1/principals/agt_gone/keys", headers=stack.admin)
    writer = {"Authorization": f"Bearer {issued.json()['key']}"}
    await agent(stack, "agt_gone")
    await create(stack, writer, "before")  # keeper now remembers the key
    revoked = await stack.http.delete(
        f"/api/v1/principals/agt_gone/keys/{issued.json()['id']}", headers=stack.admin
    )
    assert revoked.status_code == 200
    client = stack.gateway.client("memory_store")
    for body in ({"scope": SCOPE, "content": 1, "extra": 1}, {"scope": SCOPE, "content": None}):
        with pytest.raises(Problem) as raised:
            await client.invoke(
                BY_NAME["create_memory"], {}, orjson.dumps(body), credential=writer["Authorization"]
            )
        assert (raised.value.status, raised.value.code) == (401, "unauthenticated")
    assert await stack.count("memory_journal_entries") == 1
