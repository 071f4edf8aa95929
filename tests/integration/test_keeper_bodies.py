"""Keeper decodes each body with its endpoint's model (lorebase.contract), as the gateway does at the
edge: a gRPC caller that skips the gateway gets the same problem as a REST caller, member by member.

Each case sends the same bad bytes twice: over REST (the gateway refuses them) and straight to
keeper over gRPC (`stack.keeper`, the generic call of lorebase.clients), and the two problem
documents must be equal. One case per area at least; where keeper used to check a member by hand,
the case shows the model's answer reaching a gRPC caller too.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from lorebase.contract import BY_NAME
from lorebase.problems import Problem
from tests.integration.conftest import ADMIN_KEY, Stack

D = "/api/v1/domains/supply"

# (area, endpoint, its parameters, REST method and path, body)
CASES: list[tuple[str, str, dict[str, Any], str, str, Any]] = [
    (
        "admin",
        "create_principal",
        {},
        "POST",
        "/api/v1/principals",
        {"id": "Bad Id", "type": "robot", "tenant": "-x-"},
    ),
    ("admin", "create_domain", {}, "POST", "/api/v1/domains", {"name": "other"}),
    (
        "admin",
        "create_grant",
        {"domain": "supply"},
        "POST",
        D + "/grants",
        {"principal": "usr_editor", "role": ["admin"], "kinds": [], "extra": 1},
    ),
    ("admin", "add_session_note", {"session": "s-1"}, "POST", "/api/v1/sessions/s-1/notes", {"text": ""}),
    (
        "branches",
        "create_branch",
        {"domain": "supply"},
        "POST",
        D + "/branches",
        {"name": "a..b", "mode": "fork", "required_approvals": 11},
    ),
    (
        "branches",
        "update_branch",
        {"domain": "supply", "branch": "main"},
        "PATCH",
        D + "/branches/main",
        {"protected": "yes"},
    ),
    ("proposals", "create_proposal", {"domain": "supply"}, "POST", D + "/proposals", {"source": "main"}),
    (
        "proposals",
        "review_proposal",
        {"domain": "supply", "proposal": "prp_x"},
        "POST",
        D + "/proposals/prp_x/reviews",
        {"decision": "maybe", "comment": "x" * 20001},
    ),
    (
        "proposals",
        "resolve_conflict",
        {"domain": "supply", "proposal": "prp_x", "conflict": "cfl_x"},
        "POST",
        D + "/proposals/prp_x/conflicts/cfl_x/resolve",
        {"resolution": "mine"},
    ),
]


def _bytes(body: Any) -> bytes:
    return body if isinstance(body, bytes) else orjson.dumps(body)


@pytest.mark.parametrize(
    ("area", "endpoint", "values", "method", "path", "body"),
    CASES,
    ids=[f"{case[0]}-{case[1]}-{i}" for i, case in enumerate(CASES)],
)
async def test_a_grpc_caller_gets_the_problem_a_rest_caller_gets(
    supply: Stack, area: str, endpoint: str, values: dict[str, Any], method: str, path: str, body: Any
) -> None:
    data = _bytes(body)
    response = await supply.http.request(
        method, path, content=data, headers={**supply.admin, "Content-Type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text
    with pytest.raises(Problem) as raised:
        await supply.keeper.invoke(BY_NAME[endpoint], values, data, credential=f"Bearer {ADMIN_KEY}")
    assert raised.value.status == response.status_code
    assert raised.value.document() == response.json()
