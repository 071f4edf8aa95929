"""What the memory servicers of keeper and feed share: JSON bodies, replies, the caller's credential.
(Their failures are answered like every RPC's: lorebase.grpc_problems.problem_rpc.)"""

from __future__ import annotations

from typing import Any

import grpc
import orjson

from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb

NO_STORE = {"Cache-Control": "no-store"}


def json_body(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise Problem(400, "malformed-json", f"the request body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise Problem(400, "malformed-json", "the request body must be a JSON object")
    return value


def answer(document: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> pb.Reply:
    return pb.Reply(
        body=orjson.dumps(document),
        content_type="application/json",
        status=status,
        headers={**NO_STORE, **(headers or {})},
    )


def credential(context: grpc.aio.ServicerContext) -> str | None:
    return dict(context.invocation_metadata() or ()).get("authorization")


__all__ = ["NO_STORE", "answer", "credential", "json_body"]
