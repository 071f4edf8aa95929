"""Keeper RPCs of governance: Scribe's suggestions from resolve misses."""

from __future__ import annotations

import grpc

from lorebase.v1 import keeper_pb2 as pb
from lorebase_keeper.api.rpc import KeeperRpc, reply, rpc
from lorebase_keeper.governance import suggestions


class SuggestionRpcs(KeeperRpc):
    """Governance (governance/suggestions.py)."""

    @rpc
    async def ListSuggestions(
        self, request: pb.ListSuggestionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.list_suggestions(self.rt, access, domain, request.status))

    @rpc
    async def AcceptSuggestion(
        self, request: pb.SuggestionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.decide(self.rt, access, domain, request.id, "accept"))

    @rpc
    async def DismissSuggestion(
        self, request: pb.SuggestionRequest, context: grpc.aio.ServicerContext
    ) -> pb.Reply:
        domain, access = await self._domain(context, request.domain)
        return reply(await suggestions.decide(self.rt, access, domain, request.id, "dismiss"))


__all__ = ["SuggestionRpcs"]
