"""The async client of Feed."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from lorebase.clients._channel import ServiceClient, call_metadata, read_rpcs
from lorebase.grpc_problems import problem_from_error
from lorebase.problems import Problem
from lorebase.v1 import feed_pb2 as pb
from lorebase.v1 import feed_pb2_grpc


class EventStream:
    """An open event stream: `await first()` (a Problem when the caller may not read), then items."""

    def __init__(self, call: Any, service: str) -> None:
        self._call = call
        self._service = service
        self._ended = False
        self.principal = ""  # once open: the principal the credential authenticates

    async def _read(self) -> pb.StreamItem | None:
        try:
            item = await self._call.read()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._ended and not (task is not None and task.cancelling()):
                return None  # end() cancelled the call: the stream ends like any other
            raise
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.CANCELLED:
                return None
            raise problem_from_error(error, self._service) from None
        return None if item is grpc.aio.EOF else item

    async def first(self) -> int:
        """Wait for the stream to open; raises the Problem of a refused one. The answer is the
        position the stream starts after (its events have higher sequences)."""
        item = await self._read()
        if item is None or not item.ready:
            raise Problem(
                503, "unavailable", f"{self._service} closed the event stream before it opened; retry shortly"
            )
        self.principal = item.principal
        return int(item.sequence)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> pb.StreamItem:
        item = await self._read()
        if item is None:
            raise StopAsyncIteration
        return item

    def cancel(self) -> None:
        self._call.cancel()

    def end(self) -> None:
        """End the stream from outside (the gateway stopping): its reader sees a normal end."""
        self._ended = True
        self._call.cancel()


class FeedClient(ServiceClient):
    service = "feed"
    grpc_service = pb.DESCRIPTOR.services_by_name["Feed"].full_name
    reads = (*read_rpcs("feed"), "Status")

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = feed_pb2_grpc.FeedStub(self.channel)

    async def status(self, *, credential: str) -> pb.FeedStatus:
        """The relay's publication state, for the operator (the admin key)."""
        return await self._call(self._stub.Status, pb.FeedStatusRequest(), credential=credential)

    def events(
        self,
        *,
        credential: str,
        domain: str,
        branch: str,
        kinds: str = "",
        last_event_id: str = "",
        until: int | None = None,
    ) -> EventStream:
        """Open the event stream of a branch (no deadline: it ends after agents.feed.max_connection_s).

        With `until`, a control stream: the events up to that sequence, then `caught_up`, then
        only its end (docs/feed.md, "Shared branch streams")."""
        request = pb.EventsRequest(
            domain=domain,
            branch=branch,
            kinds=kinds,
            last_event_id=last_event_id,
            control=until is not None,
            until=until or 0,
        )
        return EventStream(self._stub.Events(request, metadata=call_metadata(credential)), self.service)


__all__ = ["EventStream", "FeedClient"]
