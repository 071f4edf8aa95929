"""The REST client's agent memory calls: memory records, derivations, reviews, queries, grants,
the change journal and its checkpoints (docs/memory.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.clients.rest.connection import RestConnection
from lorebase.clients.rest.routes import API, route


class MemoryCalls(RestConnection):
    """Agent memory (docs/rest.md "Agent memory")."""

    # -- agent memory ----------------------------------------------------------------------------

    async def _memory(self, name: str, body: Any = None, key: str = "", **path: str) -> Any:
        headers = {"Idempotency-Key": key} if key else None
        return (await self._send(name, path=path, body=body, headers=headers)).body

    @route("POST", API + "/memory/records")
    async def create_memory(self, *, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        return await self._memory("create_memory", dict(body), idempotency_key)

    @route("POST", API + "/memory/derivations")
    async def derive_memory(self, *, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        return await self._memory("derive_memory", dict(body), idempotency_key)

    @route("PATCH", API + "/memory/records/{record_id}")
    async def update_memory(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("update_memory", dict(body), idempotency_key, record_id=record_id)

    @route("DELETE", API + "/memory/records/{record_id}")
    async def delete_memory(
        self, *, record_id: str, body: Mapping[str, Any] | None = None, idempotency_key: str = ""
    ) -> Any:
        return await self._memory("delete_memory", dict(body or {}), idempotency_key, record_id=record_id)

    @route("PUT", API + "/memory/records/{record_id}/embedding")
    async def attach_memory_embedding(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("attach_memory_embedding", dict(body), idempotency_key, record_id=record_id)

    @route("POST", API + "/memory/records/{record_id}/reviews")
    async def review_memory(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("review_memory", dict(body), idempotency_key, record_id=record_id)

    @route("GET", API + "/memory/records/{record_id}")
    async def get_memory(self, *, record_id: str) -> Any:
        return await self._memory("get_memory", record_id=record_id)

    @route("POST", API + "/memory/query")
    async def query_memory(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("query_memory", dict(body))

    @route("POST", API + "/memory/grants")
    async def create_memory_grant(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("create_memory_grant", dict(body))

    @route("DELETE", API + "/memory/grants/{grant_id}")
    async def delete_memory_grant(self, *, grant_id: str) -> Any:
        return await self._memory("delete_memory_grant", grant_id=grant_id)

    @route("POST", API + "/memory/changes")
    async def read_memory_changes(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("read_memory_changes", dict(body))

    @route("PUT", API + "/memory/checkpoints/{consumer}")
    async def save_memory_checkpoint(self, *, consumer: str, body: Mapping[str, Any]) -> Any:
        return await self._memory("save_memory_checkpoint", dict(body), consumer=consumer)

    @route("GET", API + "/memory/checkpoints/{consumer}")
    async def get_memory_checkpoint(self, *, consumer: str) -> Any:
        return await self._memory("get_memory_checkpoint", consumer=consumer)

    @route("GET", API + "/memory/checkpoints")
    async def list_memory_checkpoints(self, *, limit: int | None = None, after: str | None = None) -> Any:
        query = {k: v for k, v in (("limit", limit), ("after", after)) if v is not None}
        return (await self._send("list_memory_checkpoints", query=query)).body

    @route("DELETE", API + "/memory/checkpoints/{consumer}")
    async def delete_memory_checkpoint(self, *, consumer: str, body: Mapping[str, Any] | None = None) -> Any:
        return await self._memory("delete_memory_checkpoint", dict(body) if body else None, consumer=consumer)


__all__ = ["MemoryCalls"]
