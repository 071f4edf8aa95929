"""Keeper RPCs of erasures (vault/erasures.py)."""

from __future__ import annotations

import grpc

from lorebase.contract.erasures import NewErasure
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.rpc import KeeperRpc, body_of, reply, rpc
from lorebase_keeper.vault.erasures import create_erasure, list_erasures


class ErasureRpcs(KeeperRpc):
    @rpc
    async def CreateErasure(
        self, request: pb.CreateErasureRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        new = body_of("create_erasure", request.body, NewErasure)
        domain, access = await self._domain(context, request.domain)
        return reply(await create_erasure(self.rt, access, domain, new), status=201)

    @rpc
    async def ListErasures(
        self, request: pb.ListErasuresRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        if not 0 <= request.limit <= 200:
            raise Problem(400, "invalid-parameter", "limit is 1 to 200 (0: 50)", parameter="limit")
        return reply(await list_erasures(self.rt, access, domain, limit=request.limit, cursor=request.cursor))


__all__ = ["ErasureRpcs"]
