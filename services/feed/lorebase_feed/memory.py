"""The MemoryJournal gRPC servicer: memory change pages and consumer checkpoints.

Each call counts against the caller's rate limits (keeper.rate_limits), change pages and checkpoint
reads in the reads class, checkpoint saves and deletes in the writes class. Like keeper's, the
buckets are this process's own."""

from __future__ import annotations

import grpc

from lorebase.grpc_problems import problem_rpc
from lorebase.memory.access import MemoryCaller, authenticate
from lorebase.memory.rpc import answer, credential, json_body
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
        return answer(await read_changes(self.db, caller, json_body(request.body)))

    @memory_rpc
    async def SaveMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        return answer(await save_checkpoint(self.db, caller, request.consumer, json_body(request.body)))

    @memory_rpc
    async def GetMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        return answer(await get_checkpoint(self.db, caller, request.consumer))

    @memory_rpc
    async def ListMemoryCheckpoints(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        query = {"after": request.after} if request.after else {}
        if request.limit:
            query["limit"] = str(request.limit)
        return answer(await list_checkpoints(self.db, caller, query))

    @memory_rpc
    async def DeleteMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        return answer(await delete_checkpoint(self.db, caller, request.consumer, json_body(request.body)))


__all__ = ["MemoryJournalServicer"]
