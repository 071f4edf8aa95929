"""Keeper.AuthorizeRead, kept for one release: the previous release's feed (v0.9.0) asks it while a
rolling upgrade runs it beside this keeper (tests/cluster/test_upgrade.py runs that feed). It is
decided by the endpoints' policies, as Keeper.Authorize is, and answered in the previous form."""

from __future__ import annotations

from typing import Any

import grpc
import orjson

from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc
from tests.integration.conftest import Stack


async def _ask(stack: Stack, credential: str, **request: str) -> tuple[grpc.StatusCode, dict[str, Any]]:
    async with grpc.aio.insecure_channel(stack.keeper_address.address) as channel:
        stub = keeper_pb2_grpc.KeeperStub(channel)
        try:
            reply = await stub.AuthorizeRead(
                pb.AuthorizeReadRequest(**request), metadata=(("authorization", credential),)
            )
        except grpc.aio.AioRpcError as error:
            return error.code(), {}
    return grpc.StatusCode.OK, orjson.loads(reply.body)


async def test_the_previous_feeds_question_is_decided_by_the_endpoints_policies(supply: Stack) -> None:
    admin = supply.admin["Authorization"]
    code, answer = await _ask(supply, admin, domain="supply", branch="main", permission="data.read")
    assert code == grpc.StatusCode.OK
    assert answer["branch"] == "main" and answer["narrowed"] is False
    assert answer["domain"] == "supply" and isinstance(answer["domain_id"], int)
    assert "Supplier" in answer["kinds"]
    code, answer = await _ask(supply, admin, domain="supply", permission="domain.settings")
    assert code == grpc.StatusCode.OK and answer["branch"] == "main"

    reader = (await supply.principal("usr_previous_reader"))["Authorization"]
    await supply.grant("supply", "usr_previous_reader", "viewer")
    code, _ = await _ask(supply, reader, domain="supply", branch="main")
    assert code == grpc.StatusCode.OK
    code, _ = await _ask(supply, reader, domain="supply", permission="domain.settings")
    assert code == grpc.StatusCode.PERMISSION_DENIED
    narrowed = (await supply.principal("usr_previous_narrowed"))["Authorization"]
    await supply.grant("supply", "usr_previous_narrowed", "viewer", kinds=["Supplier"])
    code, _ = await _ask(supply, narrowed, domain="supply", branch="main")
    assert code == grpc.StatusCode.PERMISSION_DENIED  # events list every Kind's keys
    for credential, request, expected in (
        ("Bearer lbk_nobody", {"domain": "supply"}, grpc.StatusCode.UNAUTHENTICATED),
        (admin, {"domain": "supply", "permission": "data.write"}, grpc.StatusCode.PERMISSION_DENIED),
        (admin, {"domain": "nope"}, grpc.StatusCode.NOT_FOUND),
    ):
        code, _ = await _ask(supply, credential, **request)
        assert code == expected, (request, code)
