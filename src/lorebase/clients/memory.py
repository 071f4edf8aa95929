"""The async clients of agent memory: MemoryStore (served by keeper) and MemoryJournal (by feed).
Every call is an endpoint's (the one generic call, `ServiceClient.invoke`)."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient
from lorebase.v1 import memory_pb2_grpc


class MemoryStoreClient(ServiceClient):
    service = "keeper"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryStoreStub(self.channel)


class MemoryJournalClient(ServiceClient):
    service = "feed"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryJournalStub(self.channel)


__all__ = ["MemoryJournalClient", "MemoryStoreClient"]
