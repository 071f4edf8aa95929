"""The MemoryJournal gRPC servicer: memory change pages and consumer checkpoints.

Once the caller is known, each body is decoded into its endpoint's model and each parameter
converted to its type (lorebase.contract.memory.journal), with the rules and problems of the
gateway's edge: a gRPC caller that skips the gateway gets the same answer, and the logic below
takes typed values. Each call counts against the caller's rate limits (keeper.rate_limits), change pages and checkpoint
reads in the reads class, checkpoint saves and deletes in the writes class. Like keeper's, the
buckets are this process's own."""

from __future__ import annotations

from typing import Any

import grpc

from lorebase.contract import BY_NAME
from lorebase.contract.decode import body_of, convert_parameters
from lorebase.contract.memory.journal import ChangesBody, CheckpointDeletion, CheckpointSave
from lorebase.grpc_problems import problem_rpc
from lorebase.memory.access import MemoryCaller, authenticate
from lorebase.memory.rpc import answer, credential
from lorebase.rate_limits import RateLimiter
from lorebase.v1 import keeper_pb2 as kpb
from lorebase.v1 import memory_pb2 as pb
from lorebase.v1 import memory_pb2_grpc
from lorebase_feed.memory_changes import read_changes
from lorebase_feed.memory_checkpoints import (
    delete_checkpoint,
    get_checkpoint,
    list_checkpoints,
    save_checkpoint,
)
from lorebase_store import Database

# Failures answered like every RPC of feed: a Problem as its status, anything else as a logged 500.
memory_rpc = problem_rpc("feed")


def _parameters(endpoint: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The parameters of a call, checked as the edge checks them (400 naming the one that is wrong)."""
    return convert_parameters(BY_NAME[endpoint], raw)


class MemoryJournalServicer(memory_pb2_grpc.MemoryJournalServicer):
    def __init__(self, db: Database, limits: RateLimiter | None = None) -> None:
        self.db = db
        self.limits = limits

    async def _caller(self, context: grpc.aio.ServicerContext, kind: str) -> MemoryCaller:
        caller = await authenticate(self.db, credential(context))
        if self.limits is not None and not caller.is_admin:
            self.limits.charge(caller.id, kind)
        return caller

    @memory_rpc
    async def ReadMemoryChanges(
        self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        body = body_of("read_memory_changes", request.body, ChangesBody)
        return answer(await read_changes(self.db, caller, body))

    @memory_rpc
    async def SaveMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        consumer = _parameters("save_memory_checkpoint", {"consumer": request.consumer})["consumer"]
        body = body_of("save_memory_checkpoint", request.body, CheckpointSave)
        return answer(await save_checkpoint(self.db, caller, consumer, body))

    @memory_rpc
    async def GetMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        consumer = _parameters("get_memory_checkpoint", {"consumer": request.consumer})["consumer"]
        return answer(await get_checkpoint(self.db, caller, consumer))

    @memory_rpc
    async def ListMemoryCheckpoints(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        raw: dict[str, Any] = {"after": request.after} if request.after else {}
        if request.limit:
            raw["limit"] = request.limit
        page = _parameters("list_memory_checkpoints", raw)
        return answer(await list_checkpoints(self.db, caller, page["after"], page["limit"]))

    @memory_rpc
    async def DeleteMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        consumer = _parameters("delete_memory_checkpoint", {"consumer": request.consumer})["consumer"]
        body = body_of("delete_memory_checkpoint", request.body, CheckpointDeletion)
        return answer(await delete_checkpoint(self.db, caller, consumer, body))


__all__ = ["MemoryJournalServicer"]
