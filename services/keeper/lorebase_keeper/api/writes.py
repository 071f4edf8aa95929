"""Keeper RPCs that write: Operations, imports, Source syncs and embeddings."""

from __future__ import annotations

import grpc

from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import imports, operations
from lorebase_keeper.api.rpc import KeeperRpc, json_body, reply, rpc
from lorebase_keeper.reads import set_embedding


class WriteRpcs(KeeperRpc):
    """Writes (operations/, imports/; embeddings in reads/)."""

    @rpc
    async def ExecuteOperation(
        self, request: pb.ExecuteOperationRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await operations.execute(
            self.rt, access, domain, request.operation, json_body(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def Import(self, request: pb.ImportRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await imports.run_import(
            self.rt, access, domain, json_body(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def SyncSource(self, request: pb.SyncSourceRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        outcome = await imports.sync_source(
            self.rt, access, domain, request.source, json_body(request.body), request.idempotency_key
        )
        return reply(
            outcome.document, status=outcome.status, revision=outcome.revision, headers=outcome.headers
        )

    @rpc
    async def SetEmbedding(self, request: pb.EmbeddingRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await set_embedding(
            self.rt, access, domain, request.kind, request.key, json_body(request.body)
        )
        return reply(document)


__all__ = ["WriteRpcs"]
