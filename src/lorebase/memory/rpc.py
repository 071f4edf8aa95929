"""What the memory servicers of keeper and feed share: replies and the caller's credential. (Their
bodies are decoded like every RPC's, lorebase.contract.decode.body_of, and their failures answered
like every RPC's, lorebase.grpc_problems.problem_rpc.)"""

from __future__ import annotations

from typing import Any

import grpc
import orjson

from lorebase.v1 import keeper_pb2 as pb

NO_STORE = {"Cache-Control": "no-store"}


def answer(document: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> pb.Reply:
    return pb.Reply(
        body=orjson.dumps(document),
        content_type="application/json",
        status=status,
        headers={**NO_STORE, **(headers or {})},
    )


def credential(context: grpc.aio.ServicerContext) -> str | None:
    return dict(context.invocation_metadata() or ()).get("authorization")


__all__ = ["NO_STORE", "answer", "credential"]
