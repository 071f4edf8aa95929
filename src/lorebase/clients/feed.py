"""The async client of Feed."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient
from lorebase.v1 import feed_pb2 as pb
from lorebase.v1 import feed_pb2_grpc


class FeedClient(ServiceClient):
    service = "feed"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = feed_pb2_grpc.FeedStub(self.channel)

    async def status(self) -> pb.FeedStatus:
        return await self._call(self._stub.Status, pb.FeedStatusRequest())


__all__ = ["FeedClient"]
