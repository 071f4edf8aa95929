"""The async client of Keeper. Every REST endpoint goes through the one generic call
(`ServiceClient.invoke`, lorebase.clients.calls); what is left here is what the services ask
each other."""

from __future__ import annotations

from typing import Any

import grpc
import orjson
from google.protobuf.message import Message

from lorebase.clients._channel import ServiceClient, call_metadata, read_rpcs
from lorebase.clients.calls import Answer
from lorebase.grpc_problems import problem_from_error
from lorebase.problems import Problem
from lorebase.v1 import keeper_pb2 as pb
from lorebase.v1 import keeper_pb2_grpc


class KeeperClient(ServiceClient):
    service = "keeper"
    grpc_service = pb.DESCRIPTOR.services_by_name["Keeper"].full_name
    # The REST surface's reads, and the checks the gateway and the feed ask before serving one.
    reads = (*read_rpcs("keeper"), "Authenticate", "Authorize", "AuthorizeRead")

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
        policy (a Problem when not), keeper deciding as for its own endpoints. A keeper of the
        previous release (v0.9.0, during a rolling upgrade) lacks Authorize: its AuthorizeRead
        decides a branch's changes and events instead (`_previous_authorize`)."""
        message = pb.AuthorizeRequest(endpoint=endpoint, request=request.SerializeToString())
        try:
            reply = await self._stub.Authorize(
                message, timeout=self.settings.deadline_s, metadata=call_metadata(credential)
            )
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise problem_from_error(error, self.service) from None
            return await self._previous_authorize(credential, endpoint, request)
        return Answer(reply.body, reply.revision, "application/json", 200, {})

    async def _previous_authorize(self, credential: str, endpoint: str, request: Message) -> Answer:
        """Keeper v0.9.0's AuthorizeRead for `changes` and `events` (data.read on the branch), its
        answer in this release's form: a grant narrowed to Kinds is refused as the endpoints' policy
        (every Kind) refuses it. Other endpoints wait for keeper to be upgraded (503, retry)."""
        if endpoint not in ("changes", "events"):
            raise Problem(503, "unavailable", "keeper is being upgraded; retry shortly")
        domain, branch = getattr(request, "domain", ""), getattr(request, "branch", "")
        previous = pb.AuthorizeReadRequest(domain=domain, branch=branch, permission="data.read")
        reply = await self._call(self._stub.AuthorizeRead, previous, credential=credential)
        document = orjson.loads(reply.body)
        if document.get("narrowed"):
            raise Problem(
                403,
                "forbidden",
                f"{document['principal']} holds only grants narrowed to Kinds on branch "
                f"{document['branch']!r}; following a branch needs data.read on every Kind",
            )
        document.pop("narrowed", None)
        return Answer(orjson.dumps(document), reply.revision, "application/json", 200, {})


__all__ = ["Answer", "KeeperClient"]
