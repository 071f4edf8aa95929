"""Keeper RPCs of the schema, branches and tags."""

from __future__ import annotations

import grpc

from lorebase.contract.branches import BranchUpdate, NewBranch
from lorebase.contract.tags import NewTag
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import branches
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc
from lorebase_keeper.reads import visible_schema


class BranchRpcs(KeeperRpc):
    """Schema (reads/schema_view.py) and branches (branches/)."""

    @rpc
    async def GetSchema(self, request: pb.GetSchemaRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        branch = request.branch or domain.default_branch
        head = await self.rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, branch))
        if head is None:
            raise Problem(404, "not-found", f"unknown branch {branch!r}")
        return reply({**visible_schema(access, domain, branch), "revision": head.head})

    @rpc
    async def CreateBranch(
        self, request: pb.CreateBranchRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        new = body_of("create_branch", request.body, NewBranch)
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.create_branch(self.rt, access, domain, new), status=201)

    @rpc
    async def ListBranches(self, request: pb.DomainRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.list_branches(self.rt, access, domain))

    @rpc
    async def GetBranch(self, request: pb.GetBranchRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.get_branch(self.rt, access, domain, request.branch))

    @rpc
    async def UpdateBranch(
        self, request: pb.UpdateBranchRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        change = body_of("update_branch", request.body, BranchUpdate)
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.update_branch(self.rt, access, domain, request.branch, change))

    @rpc
    async def DeleteBranch(self, request: pb.GetBranchRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.delete_branch(self.rt, access, domain, request.branch))

    @rpc
    async def CreateTag(self, request: pb.CreateTagRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        new = body_of("create_tag", request.body, NewTag)
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.create_tag(self.rt, access, domain, new), status=201)

    @rpc
    async def ListTags(self, request: pb.ListTagsRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        if not 0 <= request.limit <= 200:
            raise Problem(400, "invalid-parameter", "limit is 1 to 200 (0: 50)", parameter="limit")
        return reply(
            await branches.list_tags(self.rt, access, domain, limit=request.limit, cursor=request.cursor)
        )

    @rpc
    async def GetTag(self, request: pb.TagRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await branches.get_tag(self.rt, access, domain, request.tag))

    @rpc
    async def DeleteTag(self, request: pb.TagRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        await branches.delete_tag(self.rt, access, domain, request.tag)
        return pb.Reply(body=b"", status=204, content_type="application/json")


__all__ = ["BranchRpcs"]
