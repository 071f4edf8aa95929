"""The async client of Keeper. Every REST endpoint goes through the one generic call
(`ServiceClient.invoke`, lorebase.clients.calls); what is left here is what the services ask
each other."""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf.message import Message

from lorebase.clients._channel import ServiceClient
from lorebase.clients.calls import Answer
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc


class KeeperClient(ServiceClient):
    service = "keeper"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = keeper_pb2_grpc.KeeperStub(self.channel)

    async def authenticate(self, *, credential: str) -> str:
        """For the gateway: the principal the credential names (a 401 Problem for none)."""
        reply = await self._call(self._stub.Authenticate, pb.AuthenticateRequest(), credential=credential)
        principal: str = orjson.loads(reply.body)["principal"]
        return principal

    async def authorize(self, *, credential: str, endpoint: str, request: Message) -> Answer:
        """For the feed: whether the call `request` to its endpoint `endpoint` passes the endpoint's
        policy (a Problem when not), keeper deciding as for its own endpoints."""
        message = pb.AuthorizeRequest(endpoint=endpoint, request=request.SerializeToString())
        reply = await self._call(self._stub.Authorize, message, credential=credential)
        return Answer(reply.body, reply.revision, "application/json", 200, {})


__all__ = ["Answer", "KeeperClient"]
