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
from lorebase_gateway.body_gate import PREAUTH_BYTES
from lorebase_gateway.edge import check_body

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
    (
        "governance",
        "add_session_note",
        {"session": "s-1"},
        "POST",
        "/api/v1/sessions/s-1/notes",
        {"text": ""},
    ),
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
        "writes",
        "execute_operation",
        {"domain": "supply", "operation": "update_supplier"},
        "POST",
        D + "/operations/update_supplier/execute",
        {"parameters": "S-1001", "dry_run": "yes", "idempotency_key": "", "intent": "x" * 4001},
    ),
    (
        "writes",
        "import_data",
        {"domain": "supply"},
        "POST",
        D + "/imports",
        {"records": [{"kind": "Supplier"}], "links": [{"relation": "supplies", "from": ""}]},
    ),
    (
        "writes",
        "sync_source",
        {"domain": "supply", "source": "erp"},
        "POST",
        D + "/sources/erp/sync",
        {"mode": "partial", "records": [{"kind": "Supplier", "values": {}, "extra": 1}]},
    ),
    (
        "writes",
        "set_embedding",
        {"domain": "supply", "kind": "Supplier", "key": "S-1001"},
        "PUT",
        D + "/kinds/Supplier/records/S-1001/embedding",
        b'{"vector": [1, 1e400], "model": ""}',  # a number past a double's range
    ),
    (
        "reads",
        "context",
        {"domain": "supply"},
        "POST",
        D + "/context",
        {"refs": [], "query": {"kind": 5, "extra": 1}, "format": "html"},
    ),
    (
        "reads",
        "neighborhood",
        {"domain": "supply"},
        "POST",
        D + "/neighborhood",
        {"refs": ["Supplier/S-1001"], "values": "yes", "depth": -1},
    ),
    ("reads", "traverse", {"domain": "supply"}, "POST", D + "/traverse", {"from": ["Supplier/S-1001"]}),
    ("reads", "search", {"domain": "supply"}, "POST", D + "/search", {"limit": 0, "query_vector": []}),
    ("reads", "resolve", {"domain": "supply"}, "POST", D + "/resolve", {"text": 5, "coverage": "no"}),
    (
        "reads",
        "query",
        {"domain": "supply"},
        "POST",
        D + "/query",
        {"kind": "Supplier", "aggregate": {"sum": True}, "limit": True, "where": {"attr": "x"}},
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


async def test_a_grpc_callers_idempotency_key_is_bounded_too(supply: Stack) -> None:
    """The Idempotency-Key header is checked at the edge; a gRPC caller's key, in its own field,
    is checked by keeper by the same rule (1 to 255 characters: 400 invalid-parameter, as at the
    edge), and a refused write moves no head."""
    head = (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"]
    body = orjson.dumps({"parameters": {"key": "S-1001", "risk_score": 5}})
    for endpoint, values in (
        ("execute_operation", {"domain": "supply", "operation": "update_supplier"}),
        ("import_data", {"domain": "supply"}),
    ):
        with pytest.raises(Problem) as raised:
            await supply.keeper.invoke(
                BY_NAME[endpoint],
                {**values, "idempotency_key": "k" * 256},
                body if endpoint == "execute_operation" else b"{}",
                credential=f"Bearer {ADMIN_KEY}",
            )
        assert (raised.value.status, raised.value.code) == (400, "invalid-parameter"), endpoint
    assert (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"] == head


def _large_import(bad: dict[str, Any] | None = None, *, nested: bool = False) -> bytes:
    """An import body past the body gate's PREAUTH_BYTES, with one bad record last."""
    records: list[Any] = [
        {"kind": "Supplier", "values": {"supplier_code": f"S-{9000 + i}", "legal_name": f"Supplier {i}"}}
        for i in range(200)
    ]
    if bad is not None:
        records.append(bad)
    if nested:
        deep: Any = "x"
        for _ in range(70):
            deep = {"v": deep}
        records.append({"kind": "Supplier", "values": {"supplier_code": "S-9999", "legal_name": deep}})
    return orjson.dumps({"source": "large", "records": records})


@pytest.mark.parametrize(
    "data",
    [
        _large_import({"kind": "Supplier", "values": {"supplier_code": "S-9998"}, "unknown": 1}),
        _large_import({"kind": 5, "values": {}}),
        _large_import(nested=True),
        _large_import()[:-3],  # not JSON
    ],
    ids=["unknown-member", "wrong-type", "too-deep", "malformed"],
)
async def test_a_large_bulk_body_decoded_by_keeper_alone_answers_as_at_the_edge(
    supply: Stack, data: bytes
) -> None:
    """A bulk endpoint's body past PREAUTH_BYTES is decoded once, by keeper (the gateway leaves it to
    it, lorebase_gateway.routes): the REST caller gets the problem a gRPC caller gets, the one the
    edge answered before, and the refused import writes nothing."""
    head = (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"]
    assert len(data) > PREAUTH_BYTES
    response = await supply.http.post(
        D + "/imports", content=data, headers={**supply.admin, "Content-Type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text
    with pytest.raises(Problem) as raised:
        check_body(BY_NAME["import_data"], data)
    assert raised.value.status == response.status_code
    assert raised.value.document() == response.json()
    with pytest.raises(Problem) as raised:
        await supply.keeper.invoke(
            BY_NAME["import_data"], {"domain": "supply"}, data, credential=f"Bearer {ADMIN_KEY}"
        )
    assert raised.value.document() == response.json()
    assert (await supply.http.get(D + "/branches/main", headers=supply.admin)).json()["head"] == head
    found = await supply.http.get(D + "/kinds/Supplier/records/S-9000", headers=supply.admin)
    assert found.status_code == 404
