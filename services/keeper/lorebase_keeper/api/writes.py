"""Keeper RPCs that write: Operations, imports, Source syncs and embeddings."""

from __future__ import annotations

import grpc

from lorebase.contract.writes import Embedding, Execution, ImportBatch, SyncBatch
from lorebase.event_loop import collection_paused
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import imports, operations
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc
from lorebase_keeper.reads import set_embedding


class WriteRpcs(KeeperRpc):
    """Writes (operations/, imports/; embeddings in reads/)."""

    @rpc
    async def ExecuteOperation(
        self, request: pb.ExecuteOperationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        execution = body_of("execute_operation", request.body, Execution)
        domain, access = await self._domain(context, request.domain)
        outcome = await operations.execute(
            self.rt, access, domain, request.operation, execution, request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def Import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        with collection_paused():  # a load's objects live until it commits (lorebase.event_loop)
            batch = body_of("import_data", request.body, ImportBatch)
            domain, access = await self._domain(context, request.domain)
            outcome = await imports.run_import(self.rt, access, domain, batch, request.idempotency_key)
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def SyncSource(self, request: pb.SyncSourceRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        with collection_paused():
            batch = body_of("sync_source", request.body, SyncBatch)
            domain, access = await self._domain(context, request.domain)
            outcome = await imports.sync_source(
                self.rt, access, domain, request.source, batch, request.idempotency_key
            )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def SetEmbedding(self, request: pb.EmbeddingRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        embedding = body_of("set_embedding", request.body, Embedding)
        domain, access = await self._domain(context, request.domain)
        document = await set_embedding(self.rt, access, domain, request.kind, request.key, embedding)
        return reply(document)


__all__ = ["WriteRpcs"]
