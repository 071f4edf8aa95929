"""Keeper RPCs of administration: principals and their keys, Domains, grants."""

from __future__ import annotations

import grpc

from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import admin
from lorebase_keeper.api.rpc import KeeperRpc, json_body, reply, rpc


class AdminRpcs(KeeperRpc):
    """Administration (admin/: principals, keys, grants, Domains)."""

    @rpc
    async def CreatePrincipal(
        self, request: pb.CreatePrincipalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        return reply(
            await admin.create_principal(
                self.rt, caller, request.id, request.type, request.name, request.tenant
            ),
            status=201,
        )

    @rpc
    async def CreateKey(self, request: pb.CreateKeyRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await admin.create_key(self.rt, caller, request.principal), status=201)

    @rpc
    async def RevokeKey(self, request: pb.RevokeKeyRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await admin.revoke_key(self.rt, caller, request.principal, request.key_id))

    @rpc
    async def CreateDomain(
        self, request: pb.CreateDomainRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        return reply(await admin.create_domain(self.rt, caller, json_body(request.body)), status=201)

    @rpc
    async def ListDomains(
        self, request: pb.ListDomainsRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        caller = await self._principal(context)
        rows = await self.rt.db.read("list_domains", lambda txn: txn.list_domains())
        visible = []
        for row in rows:
            if caller.is_admin or (await self.rt.auth.access(caller, row.id)).grants:
                visible.append({"name": row.name, "default_branch": row.default_branch})
        return reply({"domains": visible})

    @rpc
    async def GetDomain(self, request: pb.DomainRequest, context: grpc.aio.ServicerContext) -> pb.Reply:
        domain, _ = await self._domain(context, request.domain)
        return reply(
            {
                "name": domain.name,
                "default_branch": domain.default_branch,
                "description": domain.schema.description,
            }
        )

    @rpc
    async def CreateGrant(
        self, request: pb.CreateGrantRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.create_grant(self.rt, access, domain, json_body(request.body)), status=201)

    @rpc
    async def DeleteGrant(
        self, request: pb.DeleteGrantRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.delete_grant(self.rt, access, domain, request.grant_id))


__all__ = ["AdminRpcs"]
