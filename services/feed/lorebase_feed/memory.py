"""The MemoryJournal gRPC servicer: memory change pages and consumer checkpoints."""

from __future__ import annotations

import grpc

from lorebase.memory.access import authenticate
from lorebase.memory.rpc import answer, credential, json_body, memory_rpc
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


class MemoryJournalServicer(memory_pb2_grpc.MemoryJournalServicer):
    def __init__(self, db: Database) -> None:
        self.db = db

    @memory_rpc
    async def ReadMemoryChanges(
        self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await authenticate(self.db, credential(context))
        return answer(await read_changes(self.db, caller, json_body(request.body)))

    @memory_rpc
    async def SaveMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await authenticate(self.db, credential(context))
        return answer(await save_checkpoint(self.db, caller, request.consumer, json_body(request.body)))

    @memory_rpc
    async def GetMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await authenticate(self.db, credential(context))
        return answer(await get_checkpoint(self.db, caller, request.consumer))

    @memory_rpc
    async def ListMemoryCheckpoints(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await authenticate(self.db, credential(context))
        return answer(await list_checkpoints(self.db, caller, json_body(request.body)))

    @memory_rpc
    async def DeleteMemoryCheckpoint(
        self, request: pb.MemoryCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await authenticate(self.db, credential(context))
        return answer(await delete_checkpoint(self.db, caller, request.consumer, json_body(request.body)))


__all__ = ["MemoryJournalServicer"]
