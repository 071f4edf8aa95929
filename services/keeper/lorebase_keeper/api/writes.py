"""Keeper RPCs that write: Operations, imports, Source syncs and embeddings."""

from __future__ import annotations

import grpc

from lorebase.contract.writes import Embedding, Execution, ImportBatch, SyncBatch
from lorebase.event_loop import collection_paused
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import imports, operations
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc
from lorebase_keeper.reads import set_embedding
from lorebase_keeper.writes import Outcome


class WriteRpcs(KeeperRpc):
    """Writes (operations/, imports/; embeddings in reads/).

    A load (an import or a source sync) runs with the cyclic garbage collector held off
    (lorebase.event_loop): its million objects live until it commits, so a collection meanwhile
    would walk them for nothing. Its body and rows live in `_import`/`_sync`, so they are freed
    before the collector runs again and it finds nothing of them.
    """

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
        with collection_paused():  # see the class docstring
            outcome = await self._import(request, context)
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    async def _import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext) -> Outcome:
        batch = body_of("import_data", request.body, ImportBatch)
        domain, access = await self._domain(context, request.domain)
        return await imports.run_import(self.rt, access, domain, batch, request.idempotency_key)

    @rpc
    async def SyncSource(self, request: pb.SyncSourceRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        with collection_paused():  # see the class docstring
            outcome = await self._sync(request, context)
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    async def _sync(self, request: pb.SyncSourceRequest, context: grpc.aio.ServicerContext) -> Outcome:
        batch = body_of("sync_source", request.body, SyncBatch)
        domain, access = await self._domain(context, request.domain)
        return await imports.sync_source(
            self.rt, access, domain, request.source, batch, request.idempotency_key
        )

    @rpc
    async def SetEmbedding(self, request: pb.EmbeddingRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        embedding = body_of("set_embedding", request.body, Embedding)
        domain, access = await self._domain(context, request.domain)
        document = await set_embedding(self.rt, access, domain, request.kind, request.key, embedding)
        return reply(document)


__all__ = ["WriteRpcs"]
