"""The async client of Keeper. Every REST endpoint goes through the one generic call
(`ServiceClient.invoke`, lorebase.clients.calls); what is left here is what the services ask
each other."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient
from lorebase.clients.calls import Answer
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc


class KeeperClient(ServiceClient):
    service = "keeper"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = keeper_pb2_grpc.KeeperStub(self.channel)

    async def authorize_read(
        self, *, credential: str, domain: str, branch: str = "", permission: str = ""
    ) -> Answer:
        """For the feed: whether the caller holds `permission` (data.read) on the branch (a Problem
        when not)."""
        request = pb.AuthorizeReadRequest(domain=domain, branch=branch, permission=permission)
        reply = await self._call(self._stub.AuthorizeRead, request, credential=credential)
        return Answer(reply.body, reply.revision, "application/json", 200, {})


__all__ = ["Answer", "KeeperClient"]
