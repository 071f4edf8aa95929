"""The fuzz probe's corpus: the 8 root causes of its 500s, each kept as a regression test.

Every request here answered 500 before the contract (issue 13); each must answer a 4xx problem
that names what to change, and a rejected write moves no head.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import httpx
import orjson
import pytest
from lorebase_gateway.responses import handled
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    document: dict[str, Any] = response.json()
    assert document["detail"]
    return document


@pytest.mark.parametrize(
    "value",
    [b"Bearer \xff\xfe", b"Bearer abc\x01def", b"Bearer caf\xc3\xa9", b"Bearer \x7f"],
    ids=["latin-1", "control", "utf-8", "delete"],
)
async def test_1_credentials_with_control_or_non_ascii_bytes_are_401(supply: Stack, value: bytes) -> None:
    response = await supply.http.get(D + "/schema", headers={"Authorization": value})  # type: ignore[arg-type]
    assert _problem(response, 401)["code"] == "unauthenticated"


@pytest.mark.parametrize("limit", ["²", "١٢", "1.5", "-1", str(2**31), str(2**63), str(2**70), "x5"])
async def test_2_limits_that_are_not_small_whole_numbers_are_400(supply: Stack, limit: str) -> None:
    response = await supply.http.get(
        D + "/kinds/Supplier/records/S-1001/history", params={"limit": limit}, headers=supply.admin
    )
    assert _problem(response, 400)["parameter"] == "limit"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", D + "/kinds/Supplier/records/S-10%0001", None),
        ("GET", D + "/kinds/Supp%00lier/records/S-1001/history", None),
        ("GET", D + "/branches/ma%00in", None),
        ("GET", D + "/schema?branch=ma%00in", None),
        ("POST", D + "/query", {"kind": "Supp\u0000lier"}),
        ("POST", D + "/resolve", {"text": "risk\u0000"}),
        ("POST", D + "/branches", {"name": "x\u0000y"}),
        (
            "POST",
            D + "/operations/update_supplier/execute",
            {"parameters": {"key": "S-1001"}, "message": "a\u0000"},
        ),
    ],
)
async def test_3_nul_in_a_path_parameter_or_a_string_member_is_4xx(
    supply: Stack, method: str, path: str, body: Any
) -> None:
    heads = await supply.count("revisions")
    response = await supply.http.request(method, path, json=body, headers=supply.admin)
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert await supply.count("revisions") == heads


async def test_4_json_nested_a_thousand_levels_is_400(supply: Stack) -> None:
    predicate = b'{"attr": "risk_score", "op": "ge", "value": 1}'
    where = b'{"not": ' * 1000 + predicate + b"}" * 1000
    for body in (
        b'{"kind": "Supplier", "where": ' + where + b"}",
        b'{"kind": "Supplier", "where": {"attr": "tier", "op": "in", "value": '
        + b"[" * 5000
        + b"]" * 5000
        + b"}}",
        b'{"parameters": {"key": "S-1001", "x": ' + b"[" * 900 + b"]" * 900 + b"}}",
    ):
        path = D + ("/query" if body.startswith(b'{"kind"') else "/operations/update_supplier/execute")
        response = await supply.http.post(
            path, content=body, headers={**supply.admin, "Content-Type": "application/json"}
        )
        assert _problem(response, 400)["code"] == "malformed-json"


@pytest.mark.parametrize(
    ("path", "body", "member"),
    [
        (D + "/grants", {"principal": "usr_editor", "role": ["viewer"]}, "role"),
        (D + "/query", {"kind": "Supplier", "where": {"attr": "tier", "op": ["eq"], "value": 1}}, "where.op"),
        (D + "/resolve", {"text": "risk", "at": 12}, "at"),
        ("/api/v1/sessions/s-1/notes", {"text": "note", "domain": 5}, "domain"),
        (D + "/branches", {"name": ["main"]}, "name"),
        (D + "/context", {"refs": "Supplier/S-1001"}, "refs"),
    ],
)
async def test_5_members_of_the_wrong_type_are_422_naming_the_member(
    supply: Stack, path: str, body: dict[str, Any], member: str
) -> None:
    response = await supply.http.post(path, json=body, headers=supply.admin)
    document = _problem(response, 422)
    assert member in [issue["path"] for issue in document["issues"]], document


@pytest.mark.parametrize(
    "cursor",
    [{"o": 2**63}, {"o": -1}, {"o": 10**12}, {"o": 1.5}, {"o": "1"}, [1, 2], "x"],
    ids=["2^63", "negative", "past-the-limit", "float", "string", "list", "text"],
)
async def test_6_forged_query_cursors_are_400(supply: Stack, cursor: Any) -> None:
    token = base64.urlsafe_b64encode(orjson.dumps(cursor)).decode().rstrip("=")
    response = await supply.http.post(
        D + "/query", json={"kind": "Supplier", "cursor": token}, headers=supply.admin
    )
    assert _problem(response, 400)["code"] == "invalid-cursor"
    response = await supply.http.get(
        D + "/kinds/Supplier/records/S-1001/history",
        params={"cursor": base64.urlsafe_b64encode(orjson.dumps([2**63, 1])).decode()},
        headers=supply.admin,
    )
    assert _problem(response, 400)["code"] == "invalid-cursor"


async def test_7_a_failing_route_answers_500_keeps_the_connection_and_logs_once(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """A route's unexpected failure is a 500 problem like any problem (the connection stays open:
    nothing propagates to the server), and a burst of them logs one traceback."""

    async def broken(request: Request) -> Response:
        raise RuntimeError("a bug")

    app = Starlette(routes=[Route("/broken", handled(broken))])
    app.state.gateway = stack.gateway
    caplog.set_level(logging.ERROR, logger="lorebase.gateway")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        for _ in range(5):
            response = await client.get("/broken")
            assert _problem(response, 500)["code"] == "internal"
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1


async def test_8_a_rejected_write_moves_no_head(supply: Stack) -> None:
    heads = await supply.count("revisions")
    for body in (
        {"parameters": {"key": "S-1001", "risk_score": 5}, "dry_run": "yes"},
        {"parameters": {"key": "S-1001", "risk_score": 5}, "expected_head": 7},
        {"parameters": {"key": "S-1001", "risk_score": 5}, "surprise": True},
    ):
        response = await supply.http.post(
            D + "/operations/update_supplier/execute", json=body, headers=supply.admin
        )
        assert _problem(response, 422)["code"] == "validation-failed"
    assert await supply.count("revisions") == heads
