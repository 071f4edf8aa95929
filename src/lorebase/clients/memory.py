"""The async clients of agent memory: MemoryStore (served by keeper) and MemoryJournal (by feed).
Every call is an endpoint's (the one generic call, `ServiceClient.invoke`)."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient, read_rpcs
from lorebase.v1 import memory_pb2, memory_pb2_grpc


class MemoryStoreClient(ServiceClient):
    service = "keeper"
    grpc_service = memory_pb2.DESCRIPTOR.services_by_name["MemoryStore"].full_name
    reads = read_rpcs("memory_store")

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryStoreStub(self.channel)


class MemoryJournalClient(ServiceClient):
    service = "feed"
    grpc_service = memory_pb2.DESCRIPTOR.services_by_name["MemoryJournal"].full_name
    reads = read_rpcs("memory_journal")

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryJournalStub(self.channel)


__all__ = ["MemoryJournalClient", "MemoryStoreClient"]
