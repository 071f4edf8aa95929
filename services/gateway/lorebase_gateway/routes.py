"""The gateway's routes, made from the endpoint declarations (lorebase.contract), not written here.

Every declared endpoint becomes one route: its parameters and body are parsed at the edge
(lorebase_gateway.edge), its service is called with the one generic call per RPC
(lorebase.clients.calls), and the answer goes back with `Lorebase-Revision` and, on cacheable reads,
an ETag. Three endpoints are the gateway's own and have a handler here: `GET /health`, the event
stream (GET .../events, through the fan-out) and the contract itself (`/openapi.json`, `/docs`);
the web app's sign-in and sign-out set its cookie (lorebase_gateway.web_session), and its sign-in
through an identity provider is the gateway's own too (lorebase_gateway.web_oidc).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from lorebase import consistency
from lorebase.contract import ENDPOINTS, Endpoint
from lorebase.contract.endpoint import COMMITTED_HEADER, READ_ORDER_HEADER
from lorebase.contract.openapi import docs_page, served_document
from lorebase.features import health_document
from lorebase.problems import Problem
from lorebase_gateway.body_gate import PREAUTH_BYTES
from lorebase_gateway.edge import check_body, credential, parameters, read_body
from lorebase_gateway.fanout import EventStreamResponse
from lorebase_gateway.gateway import HEALTH_CHECK_TIMEOUT_S, Gateway
from lorebase_gateway.read_cache import CACHE_STATUS, MIN_REVISION, Looked, max_stale, now
from lorebase_gateway.responses import Route, answer_response, handled
from lorebase_gateway.web_oidc import OIDC_ROUTES
from lorebase_gateway.web_session import WEB_ROUTES


def _call(gw: Gateway, endpoint: Endpoint) -> Route:
    """The route of a declared endpoint: parse, call its service, answer."""

    cache = gw.read_cache if endpoint.read_cache and gw.read_cache is not None else None

    async def call(request: Request) -> Response:
        caller = credential(request)
        values = parameters(endpoint, request)
        # What a read asks of the gateway's cache (400 for a bad max-stale or Revision id); a hit
        # never reaches this route (lorebase_gateway.read_cache.CachedReads), so this is a miss.
        looked = cache.read(request.scope, strict=True) if cache is not None else None
        body = None
        if endpoint.body is not None:
            await gw.body_gate.check(request, caller)  # a large body only for a known credential
            limit = gw.body_limit(endpoint.body_limit)
            body = await read_body(request, limit=limit, setting=endpoint.body_limit)
            if not (endpoint.bulk and len(body) > PREAUTH_BYTES):
                body = check_body(endpoint, body)
            # else a bulk body (an import of 100,000 Records: 0.4 s of decoding) is decoded once, by
            # keeper, with the same model and problems (lorebase.contract.decode); its credential
            # is known already (the body gate asked keeper before it was read).
        made = now()
        ask = _read_ask(request, values, looked) if endpoint.method == "GET" else consistency.PLAIN
        token = consistency.ASK.set(ask)
        try:
            answer = await gw.client(endpoint.service).invoke(endpoint, values, body, credential=caller)
        finally:
            consistency.ASK.reset(token)
        order = answer.headers.pop(READ_ORDER_HEADER, None)  # for the cache only, never the client's
        committed = answer.headers.pop(COMMITTED_HEADER, None)  # likewise
        if committed and gw.read_cache is not None:
            gw.read_cache.committed(committed.split(","))
        response = answer_response(request, answer, etag=endpoint.etag)
        if cache is not None and looked is not None and looked.ask is not None:
            response.headers[CACHE_STATUS] = "miss"
            if answer.status == 200 and response.status_code == 200:
                kept = [(n, v) for n, v in response.raw_headers if n not in _NOT_KEPT]
                tag = response.headers.get("etag")
                route = request.scope.get("route")
                cache.put(
                    looked,
                    body=answer.body,
                    headers=kept,
                    etag=tag,
                    revision=answer.revision,
                    order=order,
                    made=made,
                    route=route,
                )
        return response

    call.__name__ = endpoint.name
    return call


def _read_ask(request: Request, values: dict[str, Any], looked: Looked | None) -> consistency.ReadAsk:
    """What a read asks of consistency, for keeper's choice of a standby (lorebase.consistency): its
    `at`, the Revision it has seen and its max-stale opt-in, read as the read cache reads them."""
    stale = looked.ask.max_stale_s if looked is not None and looked.ask is not None else None
    if looked is None and "max-stale" in request.headers.get("cache-control", ""):
        try:
            stale = max_stale(request.headers["cache-control"], float("inf"))
        except Problem:
            stale = None
    at = values.get("at")
    return consistency.ask_of(
        at=at if isinstance(at, str) else None,
        min_revision=request.headers.get(MIN_REVISION),
        if_none_match=request.headers.get("if-none-match"),
        max_stale_s=stale,
    )


# Headers of a miss that a hit does not repeat: its own length, and the miss's cache status.
_NOT_KEPT = (b"content-length", b"lorebase-cache")


def _clearing(gw: Gateway, route: Route) -> Route:
    async def clearing(request: Request) -> Response:
        response = await route(request)
        if response.status_code < 400:
            gw.body_gate.forget()
            if gw.read_cache is not None:
                gw.read_cache.clear()
        return response

    clearing.__name__ = route.__name__
    return clearing


def _route(gw: Gateway, endpoint: Endpoint) -> Route:
    route = _OWN.get(endpoint.name, _call)(gw, endpoint)
    # A write that takes away what a cached answer may show (a key revoked, a grant deleted, a value
    # erased, a web session ended: the declaration's `clears_cache`) drops this gateway's cached
    # reads at once. Made through another gateway, it reaches its hits within the entries' lifetime
    # (lorebase_gateway.read_cache).
    if endpoint.clears_cache:
        route = _clearing(gw, route)
    return route


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


_OWN = {"events": _events, "health": _health, **WEB_ROUTES, **OIDC_ROUTES}


def declared_routes(gw: Gateway) -> list[tuple[str, str, Route]]:
    """(path, method, route) of every declared endpoint, in declaration order."""
    return [
        (
            endpoint.path,
            endpoint.method,
            handled(_route(gw, endpoint), no_store=endpoint.no_store, limited=endpoint.service != "gateway"),
        )
        for endpoint in ENDPOINTS
    ]


def contract_routes(gw: Gateway) -> list[tuple[str, str, Route]]:
    """`GET /openapi.json` and `GET /docs`: the contract, for anyone (no key); with identity
    providers configured, the document names their openIdConnect schemes."""
    openapi = orjson.dumps(served_document(gw.oidc_issuers))
    page = docs_page()
    # The page's one inline script, allowed by its digest; it reads /openapi.json and nothing else.
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
    )

    async def openapi_json(request: Request) -> Response:
        return Response(openapi, media_type="application/json")

    async def docs(request: Request) -> Response:
        return HTMLResponse(page, headers={"Content-Security-Policy": policy})

    return [("/openapi.json", "GET", openapi_json), ("/docs", "GET", docs)]


__all__ = ["contract_routes", "declared_routes"]
