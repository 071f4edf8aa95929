"""Keeper RPCs that read: a Record, its Links, history and lineage, explain, diff, data health,
and the reads of the graph (neighbourhoods, walks, context packs, resolve, search, query).
"""

from __future__ import annotations

import grpc

from lorebase.contract.endpoint import READ_ORDER_HEADER
from lorebase.contract.reads import (
    ContextBody,
    NeighborhoodBody,
    QueryBody,
    ResolveBody,
    SearchBody,
    TraverseBody,
)
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import reads
from lorebase_keeper.api.rpc import KeeperRpc, body_of, markdown_reply, reply, rpc, wants_markdown
from lorebase_keeper.context import context_pack


class ReadRpcs(KeeperRpc):
    """Reads (reads/) and context packs (context/)."""

    @rpc
    async def GetRecord(self, request: pb.GetRecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document, order = await reads.get_record(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
            links=request.links,
            lineage=request.lineage,
        )
        return reply(document, headers=None if order is None else {READ_ORDER_HEADER: order})

    @rpc
    async def GetLinks(self, request: pb.GetLinksRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await reads.get_links(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            relation_name=request.relation,
            at=request.at or None,
            limit=request.limit,
            cursor=request.cursor or None,
        )
        return reply(document)

    @rpc
    async def GetHistory(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await reads.get_history(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
            values=request.values,
            limit=request.limit,
            cursor=request.cursor or None,
        )
        return reply(document)

    @rpc
    async def GetLineage(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await reads.get_lineage(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
        )
        return reply(document)

    @rpc
    async def Explain(self, request: pb.RecordRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        markdown = wants_markdown(request.format)
        domain, access = await self._domain(context, request.domain)
        document = await reads.explain(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            kind_name=request.kind,
            key=request.key,
            at=request.at or None,
        )
        if markdown:
            return markdown_reply(reads.explain_markdown(document), document["revision"])
        return reply(document)

    @rpc
    async def Diff(self, request: pb.DiffRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        document = await reads.diff(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            older=request.from_revision,
            newer=request.to_revision,
        )
        return reply(document)

    @rpc
    async def GetHealth(self, request: pb.HealthRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        markdown = wants_markdown(request.format)
        domain, access = await self._domain(context, request.domain)
        document = await reads.data_health(
            self.rt,
            access,
            domain,
            branch=request.branch or None,
            at=request.at or None,
            kind_name=request.kind or None,
        )
        if markdown:
            return markdown_reply(reads.health_markdown(document), document["revision"])
        return reply(document)

    @rpc
    async def Neighborhood(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("neighborhood", request.body, NeighborhoodBody)
        domain, access = await self._domain(context, request.domain)
        return reply(await reads.neighborhood(self.rt, access, domain, body))

    @rpc
    async def Context(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("context", request.body, ContextBody)
        domain, access = await self._domain(context, request.domain)
        pack = await context_pack(self.rt, access, domain, body)
        return pb.Reply(
            body=pack.body,
            revision=pack.revision,
            content_type=pack.content_type,
            status=200,
            headers={"ETag": pack.etag},
        )

    @rpc
    async def Resolve(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("resolve", request.body, ResolveBody)
        domain, access = await self._domain(context, request.domain)
        return reply(await reads.resolve(self.rt, access, domain, body))

    @rpc
    async def Search(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("search", request.body, SearchBody)
        domain, access = await self._domain(context, request.domain)
        return reply(await reads.search(self.rt, access, domain, body))

    @rpc
    async def Traverse(self, request: pb.GraphRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("traverse", request.body, TraverseBody)
        domain, access = await self._domain(context, request.domain)
        return reply(await reads.traverse(self.rt, access, domain, body))

    @rpc
    async def Query(self, request: pb.QueryRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        body = body_of("query", request.body, QueryBody)
        domain, access = await self._domain(context, request.domain)
        return reply(await reads.run_query(self.rt, access, domain, body))


__all__ = ["ReadRpcs"]
