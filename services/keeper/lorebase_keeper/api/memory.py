"""The MemoryStore gRPC servicer: memory commands, record reads and memory grants.

Each call counts against the caller's rate limits like a Domain call (keeper.rate_limits): record
reads and queries in the reads class, commands and grant changes in the writes class."""

from __future__ import annotations

import grpc

from lorebase.credentials import presented_digest
from lorebase.grpc_problems import problem_rpc
from lorebase.memory.access import MemoryCaller, authenticate, caller_of_digest
from lorebase.memory.rpc import answer, credential, json_body
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as kpb
from lorebase.v1 import memory_pb2 as pb
from lorebase.v1 import memory_pb2_grpc
from lorebase_keeper import memory
from lorebase_keeper.runtime import Runtime

# Failures answered like every RPC of keeper: a Problem as its status, anything else as a logged 500.
memory_rpc = problem_rpc("keeper")


class MemoryStoreServicer(memory_pb2_grpc.MemoryStoreServicer):
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.max_content_bytes = rt.settings.model.memory.max_content_bytes

    async def _caller(self, context: grpc.aio.ServicerContext, kind: str) -> MemoryCaller:
        caller = await authenticate(self.rt.db, credential(context))
        self._charge(caller, kind)
        return caller

    def _charge(self, caller: MemoryCaller, kind: str) -> None:
        if self.rt.limits is not None and not caller.is_admin:
            self.rt.limits.charge(caller.id, kind)

    async def _command(
        self, name: str, request: pb.MemoryRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        # The command's group checks the key again in its transaction (memory/commit.py): the caller
        # known here only routes the command to its journal.
        digest = presented_digest(credential(context))
        caller = await self.rt.memory.caller(digest)
        self._charge(caller, "writes")
        try:
            command = memory.parse_command(
                name,
                json_body(request.body),
                request.record_id or None,
                request.idempotency_key,
                self.max_content_bytes,
            )
        except Problem:
            await caller_of_digest(self.rt.db, digest)  # a revoked key is 401 before a bad body is 422
            raise
        outcome = await self.rt.memory.run(caller, command, digest)
        return answer(outcome.document, status=outcome.status, headers=outcome.headers)

    @memory_rpc
    async def CreateMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        return await self._command("create", request, context)

    @memory_rpc
    async def DeriveMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        return await self._command("derive", request, context)

    @memory_rpc
    async def UpdateMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        return await self._command("update", request, context)

    @memory_rpc
    async def DeleteMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        return await self._command("delete", request, context)

    @memory_rpc
    async def AttachMemoryEmbedding(
        self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        return await self._command("attach_embedding", request, context)

    @memory_rpc
    async def ReviewMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        return await self._command("review", request, context)

    @memory_rpc
    async def GetMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        return answer(await memory.get_record(self.rt.db, caller, request.record_id))

    @memory_rpc
    async def QueryMemory(self, request: pb.MemoryRequest, context: grpc.aio.ServicerContext) -> kpb.Reply:
        caller = await self._caller(context, "reads")
        return answer(await memory.query_records(self.rt.db, caller, json_body(request.body)))

    @memory_rpc
    async def CreateMemoryGrant(
        self, request: pb.MemoryGrantRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        return answer(await memory.create_grant(self.rt.db, caller, json_body(request.body)), status=201)

    @memory_rpc
    async def DeleteMemoryGrant(
        self, request: pb.MemoryGrantRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        return answer(await memory.delete_grant(self.rt.db, caller, request.grant_id))


__all__ = ["MemoryStoreServicer"]
