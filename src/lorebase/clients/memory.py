"""The async clients of agent memory: MemoryStore (served by keeper) and MemoryJournal (by feed)."""

from __future__ import annotations

from typing import Any

from lorebase.clients._channel import ServiceClient
from lorebase.clients.keeper import Answer, _answer, _body
from lorebase.v1 import memory_pb2 as pb
from lorebase.v1 import memory_pb2_grpc


class MemoryStoreClient(ServiceClient):
    service = "keeper"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryStoreStub(self.channel)

    async def _command(
        self, method: Any, *, credential: str, record_id: str = "", body: Any = b"", idempotency_key: str = ""
    ) -> Answer:
        request = pb.MemoryRequest(record_id=record_id, body=_body(body), idempotency_key=idempotency_key)
        return _answer(await self._call(method, request, credential=credential))

    async def create_memory(self, *, credential: str, body: Any, idempotency_key: str = "") -> Answer:
        return await self._command(
            self._stub.CreateMemory, credential=credential, body=body, idempotency_key=idempotency_key
        )

    async def derive_memory(self, *, credential: str, body: Any, idempotency_key: str = "") -> Answer:
        return await self._command(
            self._stub.DeriveMemory, credential=credential, body=body, idempotency_key=idempotency_key
        )

    async def update_memory(
        self, *, credential: str, record_id: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        return await self._command(
            self._stub.UpdateMemory,
            credential=credential,
            record_id=record_id,
            body=body,
            idempotency_key=idempotency_key,
        )

    async def delete_memory(
        self, *, credential: str, record_id: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        return await self._command(
            self._stub.DeleteMemory,
            credential=credential,
            record_id=record_id,
            body=body,
            idempotency_key=idempotency_key,
        )

    async def attach_memory_embedding(
        self, *, credential: str, record_id: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        return await self._command(
            self._stub.AttachMemoryEmbedding,
            credential=credential,
            record_id=record_id,
            body=body,
            idempotency_key=idempotency_key,
        )

    async def review_memory(
        self, *, credential: str, record_id: str, body: Any, idempotency_key: str = ""
    ) -> Answer:
        return await self._command(
            self._stub.ReviewMemory,
            credential=credential,
            record_id=record_id,
            body=body,
            idempotency_key=idempotency_key,
        )

    async def get_memory(self, *, credential: str, record_id: str) -> Answer:
        return await self._command(self._stub.GetMemory, credential=credential, record_id=record_id)

    async def query_memory(self, *, credential: str, body: Any) -> Answer:
        return await self._command(self._stub.QueryMemory, credential=credential, body=body)

    async def create_memory_grant(self, *, credential: str, body: Any) -> Answer:
        request = pb.MemoryGrantRequest(body=_body(body))
        return _answer(await self._call(self._stub.CreateMemoryGrant, request, credential=credential))

    async def delete_memory_grant(self, *, credential: str, grant_id: str) -> Answer:
        request = pb.MemoryGrantRequest(grant_id=grant_id)
        return _answer(await self._call(self._stub.DeleteMemoryGrant, request, credential=credential))


class MemoryJournalClient(ServiceClient):
    service = "feed"

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self._stub = memory_pb2_grpc.MemoryJournalStub(self.channel)

    async def read_memory_changes(self, *, credential: str, body: Any) -> Answer:
        request = pb.MemoryRequest(body=_body(body))
        return _answer(await self._call(self._stub.ReadMemoryChanges, request, credential=credential))

    async def save_memory_checkpoint(self, *, credential: str, consumer: str, body: Any) -> Answer:
        request = pb.MemoryCheckpointRequest(consumer=consumer, body=_body(body))
        return _answer(await self._call(self._stub.SaveMemoryCheckpoint, request, credential=credential))

    async def get_memory_checkpoint(self, *, credential: str, consumer: str) -> Answer:
        request = pb.MemoryCheckpointRequest(consumer=consumer)
        return _answer(await self._call(self._stub.GetMemoryCheckpoint, request, credential=credential))

    async def list_memory_checkpoints(self, *, credential: str, query: dict[str, str]) -> Answer:
        request = pb.MemoryCheckpointRequest(body=_body(query))
        return _answer(await self._call(self._stub.ListMemoryCheckpoints, request, credential=credential))

    async def delete_memory_checkpoint(self, *, credential: str, consumer: str, body: Any) -> Answer:
        request = pb.MemoryCheckpointRequest(consumer=consumer, body=_body(body))
        return _answer(await self._call(self._stub.DeleteMemoryCheckpoint, request, credential=credential))


__all__ = ["MemoryJournalClient", "MemoryStoreClient"]
