"""Keeper RPCs of administration: principals and their keys, Domains, grants.

A new principal travels as the fields of its message (not as a JSON body): they are checked by the
same model as the body of POST /principals, so a gRPC caller gets the answer a REST caller gets."""

from __future__ import annotations

import grpc
import orjson

from lorebase.contract.admin import NewDomain, NewGrant, NewPrincipal
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper import admin
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc


def _new_principal(request: pb.CreatePrincipalRequest) -> NewPrincipal:
    """The message's fields as the body they came from (an empty field: a member not sent)."""
    members = {"id": request.id, "type": request.type, "name": request.name, "tenant": request.tenant}
    data = orjson.dumps({name: value for name, value in members.items() if value})
    return body_of("create_principal", data, NewPrincipal)


class AdminRpcs(KeeperRpc):
    """Administration (admin/: principals, keys, grants, Domains)."""

    @rpc
    async def CreatePrincipal(
        self, request: pb.CreatePrincipalRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        new = _new_principal(request)
        caller = await self._principal(context)
        return reply(await admin.create_principal(self.rt, caller, new), status=201)

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
        new = body_of("create_domain", request.body, NewDomain)
        caller = await self._principal(context)
        return reply(await admin.create_domain(self.rt, caller, new), status=201)

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
        new = body_of("create_grant", request.body, NewGrant)
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.create_grant(self.rt, access, domain, new), status=201)

    @rpc
    async def DeleteGrant(
        self, request: pb.DeleteGrantRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await admin.delete_grant(self.rt, access, domain, request.grant_id))


__all__ = ["AdminRpcs"]
