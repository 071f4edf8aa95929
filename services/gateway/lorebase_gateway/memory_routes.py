"""The agent memory routes under /api/v1/memory (docs/memory.md): commands and reads go to keeper's
MemoryStore, changes and checkpoints to feed's MemoryJournal. Bodies are limited to
memory.max_body_bytes (64 KiB; 413 beyond) and every answer carries Cache-Control: no-store."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI, Request
from starlette.responses import Response

from lorebase.clients import Answer
from lorebase_gateway.app import Gateway, Route, add_route, answer_response, credential, handled

MEMORY = "/api/v1/memory"


def register_memory(app: FastAPI, gw: Gateway) -> None:
    def route(path: str, method: str) -> Callable[[Route], Route]:
        def decorate(fn: Route) -> Route:
            inner = handled(fn)

            async def no_store(request: Request) -> Response:
                response = await inner(request)
                response.headers["Cache-Control"] = "no-store"
                return response

            no_store.__name__ = fn.__name__
            add_route(app, path, method, no_store)
            return fn

        return decorate

    async def body(request: Request, *, allow_empty: bool = False) -> bytes:
        return await gw.body(
            request, limit=gw.max_memory_body_bytes, setting="memory.max_body_bytes", allow_empty=allow_empty
        )

    def key(request: Request) -> str:
        return request.headers.get("idempotency-key", "")

    def send(request: Request, answer: Answer) -> Response:
        return answer_response(request, answer)

    @route(MEMORY + "/records", "POST")
    async def create_memory(request: Request) -> Response:
        answer = await gw.memory.create_memory(
            credential=credential(request), body=await body(request), idempotency_key=key(request)
        )
        return send(request, answer)

    @route(MEMORY + "/derivations", "POST")
    async def derive_memory(request: Request) -> Response:
        answer = await gw.memory.derive_memory(
            credential=credential(request), body=await body(request), idempotency_key=key(request)
        )
        return send(request, answer)

    @route(MEMORY + "/records/{record_id}", "PATCH")
    async def update_memory(request: Request) -> Response:
        answer = await gw.memory.update_memory(
            credential=credential(request),
            record_id=request.path_params["record_id"],
            body=await body(request),
            idempotency_key=key(request),
        )
        return send(request, answer)

    @route(MEMORY + "/records/{record_id}", "DELETE")
    async def delete_memory(request: Request) -> Response:
        answer = await gw.memory.delete_memory(
            credential=credential(request),
            record_id=request.path_params["record_id"],
            body=await body(request, allow_empty=True),
            idempotency_key=key(request),
        )
        return send(request, answer)

    @route(MEMORY + "/records/{record_id}/embedding", "PUT")
    async def attach_memory_embedding(request: Request) -> Response:
        answer = await gw.memory.attach_memory_embedding(
            credential=credential(request),
            record_id=request.path_params["record_id"],
            body=await body(request),
            idempotency_key=key(request),
        )
        return send(request, answer)

    @route(MEMORY + "/records/{record_id}/reviews", "POST")
    async def review_memory(request: Request) -> Response:
        answer = await gw.memory.review_memory(
            credential=credential(request),
            record_id=request.path_params["record_id"],
            body=await body(request),
            idempotency_key=key(request),
        )
        return send(request, answer)

    @route(MEMORY + "/records/{record_id}", "GET")
    async def get_memory(request: Request) -> Response:
        answer = await gw.memory.get_memory(
            credential=credential(request), record_id=request.path_params["record_id"]
        )
        return send(request, answer)

    @route(MEMORY + "/query", "POST")
    async def query_memory(request: Request) -> Response:
        answer = await gw.memory.query_memory(credential=credential(request), body=await body(request))
        return send(request, answer)

    @route(MEMORY + "/grants", "POST")
    async def create_memory_grant(request: Request) -> Response:
        answer = await gw.memory.create_memory_grant(credential=credential(request), body=await body(request))
        return send(request, answer)

    @route(MEMORY + "/grants/{grant_id}", "DELETE")
    async def delete_memory_grant(request: Request) -> Response:
        answer = await gw.memory.delete_memory_grant(
            credential=credential(request), grant_id=request.path_params["grant_id"]
        )
        return send(request, answer)

    @route(MEMORY + "/changes", "POST")
    async def read_memory_changes(request: Request) -> Response:
        answer = await gw.journal.read_memory_changes(
            credential=credential(request), body=await body(request)
        )
        return send(request, answer)

    @route(MEMORY + "/checkpoints/{consumer}", "PUT")
    async def save_memory_checkpoint(request: Request) -> Response:
        answer = await gw.journal.save_memory_checkpoint(
            credential=credential(request), consumer=request.path_params["consumer"], body=await body(request)
        )
        return send(request, answer)

    @route(MEMORY + "/checkpoints/{consumer}", "GET")
    async def get_memory_checkpoint(request: Request) -> Response:
        answer = await gw.journal.get_memory_checkpoint(
            credential=credential(request), consumer=request.path_params["consumer"]
        )
        return send(request, answer)

    @route(MEMORY + "/checkpoints", "GET")
    async def list_memory_checkpoints(request: Request) -> Response:
        answer = await gw.journal.list_memory_checkpoints(
            credential=credential(request), query=dict(request.query_params)
        )
        return send(request, answer)

    @route(MEMORY + "/checkpoints/{consumer}", "DELETE")
    async def delete_memory_checkpoint(request: Request) -> Response:
        answer = await gw.journal.delete_memory_checkpoint(
            credential=credential(request),
            consumer=request.path_params["consumer"],
            body=await body(request, allow_empty=True),
        )
        return send(request, answer)


__all__ = ["register_memory"]
