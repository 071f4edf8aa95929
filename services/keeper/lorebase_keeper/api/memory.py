"""The MemoryStore gRPC servicer: memory commands, record reads and memory grants.

Each body is decoded into its endpoint's model (lorebase.contract.memory) with the rules and
problems of the gateway's edge, once the caller is known: a gRPC caller that skips the gateway gets
the same answer, and the logic below takes the typed object. Each call counts against the caller's
rate limits like a Domain call (keeper.rate_limits): record reads and queries in the reads class,
commands and grant changes in the writes class."""

from __future__ import annotations

import grpc

from lorebase.contract.decode import body_of
from lorebase.contract.memory import (
    DerivedMemory,
    EmbeddingBinding,
    MemoryDeletion,
    MemoryGrantBody,
    MemoryQueryBody,
    MemoryReviewCommand,
    MemoryUpdate,
    NewMemory,
)
from lorebase.credentials import presented_digest
from lorebase.grpc_problems import problem_rpc
from lorebase.memory.access import MemoryCaller, authenticate, caller_of_digest
from lorebase.memory.rpc import answer, credential
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as kpb
from lorebase.v1 import memory_pb2 as pb
from lorebase.v1 import memory_pb2_grpc
from lorebase_keeper import memory
from lorebase_keeper.runtime import Runtime

# Failures answered like every RPC of keeper: a Problem as its status, anything else as a logged 500.
memory_rpc = problem_rpc("keeper")
# Each command: its endpoint and body model (lorebase.contract.memory).
_COMMANDS: dict[str, tuple[str, type[memory.CommandBody]]] = {
    "create": ("create_memory", NewMemory),
    "derive": ("derive_memory", DerivedMemory),
    "update": ("update_memory", MemoryUpdate),
    "delete": ("delete_memory", MemoryDeletion),
    "attach_embedding": ("attach_memory_embedding", EmbeddingBinding),
    "review": ("review_memory", MemoryReviewCommand),
}


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
        endpoint, model = _COMMANDS[name]
        try:
            body = body_of(endpoint, request.body, model)
            command = memory.command_of(
                name, body, request.record_id or None, request.idempotency_key, self.max_content_bytes
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
        body = body_of("query_memory", request.body, MemoryQueryBody)
        return answer(await memory.query_records(self.rt.db, caller, body))

    @memory_rpc
    async def CreateMemoryGrant(
        self, request: pb.MemoryGrantRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        body = body_of("create_memory_grant", request.body, MemoryGrantBody)
        return answer(await memory.create_grant(self.rt.db, caller, body), status=201)

    @memory_rpc
    async def DeleteMemoryGrant(
        self, request: pb.MemoryGrantRequest, context: grpc.aio.ServicerContext
    ) -> kpb.Reply:
        caller = await self._caller(context, "writes")
        return answer(await memory.delete_grant(self.rt.db, caller, request.grant_id))


__all__ = ["MemoryStoreServicer"]
