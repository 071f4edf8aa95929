"""The REST client's writes: Operations, imports, Source syncs and embeddings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.clients.rest.connection import Reply, RestConnection, request_body
from lorebase.clients.rest.routes import DOMAIN, RECORD, route


class WriteCalls(RestConnection):
    """Writes (docs/rest.md "Writes", "Embeddings")."""

    # -- writes ----------------------------------------------------------------------------------

    @route("POST", DOMAIN + "/operations/{operation}/execute")
    async def execute(self, *, domain: str, operation: str, body: Mapping[str, Any]) -> Reply:
        """The whole answer: callers look at the status (200 committed, 202 proposed) and headers."""
        return await self._send("execute", path={"domain": domain, "operation": operation}, body=dict(body))

    @route("POST", DOMAIN + "/imports")
    async def import_data(self, *, domain: str, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        reply = await self._send("import_data", path={"domain": domain}, body=dict(body), headers=headers)
        return reply.body

    @route("POST", DOMAIN + "/sources/{source}/sync")
    async def sync_source(
        self, *, domain: str, source: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        path = {"domain": domain, "source": source}
        return (await self._send("sync_source", path=path, body=dict(body), headers=headers)).body

    @route("PUT", RECORD + "/embedding")
    async def set_embedding(
        self, *, domain: str, kind: str, key: str, vector: list[float], model: str, branch: str = ""
    ) -> Any:
        body = request_body({"vector": vector, "model": model, "branch": branch})
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("set_embedding", path=path, body=body)).body


__all__ = ["WriteCalls"]
