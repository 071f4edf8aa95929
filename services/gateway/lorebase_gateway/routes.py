"""The gateway's routes, made from the endpoint declarations (lorebase.contract), not written here.

Every declared endpoint becomes one route: its parameters and body are parsed at the edge
(lorebase_gateway.edge), its service is called with the one generic call per RPC
(lorebase.clients.calls), and the answer goes back with `Lorebase-Revision` and, on cacheable reads,
an ETag. Three endpoints are the gateway's own and have a handler here: `GET /health`, the event
stream (GET .../events, through the fan-out) and the contract itself (`/openapi.json`, `/docs`);
the web app's sign-in and sign-out set its cookie (lorebase_gateway.web_session).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.contract.openapi import docs_page, document
from lorebase.features import health_document
from lorebase.problems import Problem
from lorebase_gateway.edge import check_body, credential, parameters, read_body
from lorebase_gateway.fanout import EventStreamResponse
from lorebase_gateway.gateway import HEALTH_CHECK_TIMEOUT_S, Gateway
from lorebase_gateway.responses import Route, answer_response, handled
from lorebase_gateway.web_session import WEB_ROUTES


def _call(gw: Gateway, endpoint: Endpoint) -> Route:
    """The route of a declared endpoint: parse, call its service, answer."""

    async def call(request: Request) -> Response:
        caller = credential(request)
        values = parameters(endpoint, request)
        body = None
        if endpoint.body is not None:
            limit = gw.body_limit(endpoint.body_limit)
            body = check_body(endpoint, await read_body(request, limit=limit, setting=endpoint.body_limit))
        answer = await gw.client(endpoint.service).invoke(endpoint, values, body, credential=caller)
        return answer_response(request, answer, etag=endpoint.etag)

    call.__name__ = endpoint.name
    return call


def _events(gw: Gateway, endpoint: Endpoint) -> Route:
    async def events(request: Request) -> Response:
        caller = credential(request)
        values = parameters(endpoint, request)
        if gw.draining:
            raise Problem(503, "unavailable", "the gateway is stopping; reconnect", retry_after=1)
        follower = await gw.fanout.follow(  # refusals (401, 403, 404, 400) answer as problem details
            credential=caller,
            domain=values["domain"],
            branch=values["branch"],
            kinds=values["kinds"],
            last_event_id=values["last_event_header"] or values["last_event_id"],
        )
        return EventStreamResponse(gw.fanout, follower)

    return events


def _health(gw: Gateway, endpoint: Endpoint) -> Route:
    async def health(request: Request) -> Response:
        # All at once, each bounded by its deadline: a service that is down or hangs costs at most
        # HEALTH_CHECK_TIMEOUT_S, and the 503 names it (`lorebase up` restarts it meanwhile).
        clients = {"keeper": gw.keeper, "feed": gw.feed, "scribe": gw.scribe}
        answers = await asyncio.gather(
            *(client.healthy(timeout_s=HEALTH_CHECK_TIMEOUT_S) for client in clients.values())
        )
        checks = dict(zip(clients, answers, strict=True))
        if all(checks.values()):
            body: dict[str, Any] = health_document("ok")
            degraded = await gw.degraded()
            if degraded:
                body = health_document("degraded", degraded=degraded)
            return Response(orjson.dumps(body), media_type="application/json")
        body = health_document("unavailable", services=checks)
        return Response(orjson.dumps(body), status_code=503, media_type="application/json")

    return health


_OWN = {"events": _events, "health": _health, **WEB_ROUTES}


def declared_routes(gw: Gateway) -> list[tuple[str, str, Route]]:
    """(path, method, route) of every declared endpoint, in declaration order."""
    return [
        (
            endpoint.path,
            endpoint.method,
            handled(_OWN.get(endpoint.name, _call)(gw, endpoint), no_store=endpoint.no_store),
        )
        for endpoint in ENDPOINTS
    ]


def contract_routes() -> list[tuple[str, str, Route]]:
    """`GET /openapi.json` and `GET /docs`: the contract, for anyone (no key)."""
    openapi = orjson.dumps(document())
    page = docs_page()

    async def openapi_json(request: Request) -> Response:
        return Response(openapi, media_type="application/json")

    async def docs(request: Request) -> Response:
        return HTMLResponse(page)

    return [("/openapi.json", "GET", openapi_json), ("/docs", "GET", docs)]


__all__ = ["contract_routes", "declared_routes"]
