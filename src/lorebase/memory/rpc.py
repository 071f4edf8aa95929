"""What the memory servicers of keeper and feed share: JSON bodies, replies, problems as statuses."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import orjson

from lorebase.grpc_problems import abort_with_problem
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb

logger = logging.getLogger("lorebase.memory.rpc")

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


Method = Callable[..., Awaitable[pb.Reply]]


def memory_rpc(method: Method) -> Method:
    """Map Problems (and unexpected failures: 500 with the error in the log) to gRPC statuses."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> pb.Reply:
        try:
            return await method(self, request, context)
        except Problem as problem:
            await abort_with_problem(context, problem)
        except Exception:
            logger.exception("memory %s failed", method.__name__)
            await abort_with_problem(
                context, Problem(500, "internal", "the memory service failed; the error is in its log")
            )
        raise AssertionError("unreachable")

    return wrapper


__all__ = ["NO_STORE", "answer", "credential", "json_body", "memory_rpc"]
