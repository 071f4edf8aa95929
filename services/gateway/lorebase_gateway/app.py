"""The REST surface: authentication header, body limits, problem details, ETags, translation to gRPC.

Routes are thin: each reads the path, query and body, calls one Keeper client method with the
caller's credential, and sends the answer with `Lorebase-Revision` (and an ETag on reads). Keeper
decides everything else (authorization included); its problems come back as they were raised.
Before a route calls anyone, its client address must not have spent its allowance of requests
without a valid credential (lorebase_gateway.address_limits). Slow requests are cut off below the
app, by the HTTP protocol (lorebase_gateway.http_protocol).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Match
from starlette.routing import Route as StarletteRoute
from starlette.types import Receive, Scope, Send

from lorebase import __version__
from lorebase.clients import (
    Answer,
    FeedClient,
    KeeperClient,
    MemoryJournalClient,
    MemoryStoreClient,
    ScribeClient,
)
from lorebase.clients._channel import SESSION
from lorebase.config import Settings
from lorebase.problems import Problem
from lorebase_gateway.address_limits import AddressLimits
from lorebase_gateway.fanout import SERVER_SEND, Fanout, Follower
from lorebase_gateway.stream_caps import StreamCaps

PROBLEM_TYPE = "application/problem+json"
# GET /health asks every service's gRPC health check at once, each with this deadline.
HEALTH_CHECK_TIMEOUT_S = 2.0


def problem_response(problem: Problem) -> Response:
    headers = {}
    if problem.status in (429, 503) and isinstance(problem.extra.get("retry_after"), int):
        headers["Retry-After"] = str(problem.extra["retry_after"])
    return Response(problem.to_json(), status_code=problem.status, media_type=PROBLEM_TYPE, headers=headers)


def answer_response(request: Request, answer: Answer, *, etag: bool = False) -> Response:
    headers = dict(answer.headers)
    if answer.revision:
        headers["Lorebase-Revision"] = answer.revision
    tag = headers.get("ETag")  # keeper's own (head Revision + request digest), else one from the body
    if tag is None and etag and answer.status == 200:
        tag = f'"{answer.revision or "empty"}.{hashlib.sha256(answer.body).hexdigest()[:16]}"'
        headers["ETag"] = tag
    if tag is not None and tag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(answer.body, status_code=answer.status, media_type=answer.content_type, headers=headers)


class Gateway:
    """The clients and limits the routes share."""

    keeper: KeeperClient
    scribe: ScribeClient

    memory: MemoryStoreClient
    journal: MemoryJournalClient

    def __init__(
        self,
        *,
        max_body_bytes: int,
        max_import_body_bytes: int | None = None,
        max_memory_body_bytes: int = 65536,
        heartbeat_s: float = 15,
        stream_caps: StreamCaps | None = None,
        address_limits: AddressLimits | None = None,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        self.max_import_body_bytes = max_import_body_bytes or max_body_bytes
        self.max_memory_body_bytes = max_memory_body_bytes
        self._memory_clients: tuple[MemoryStoreClient, MemoryJournalClient] | None = None
        # The event streams, one shared Feed stream per branch; ended cleanly when the gateway stops.
        self.fanout = Fanout(heartbeat_s=heartbeat_s, caps=stream_caps)
        self.address_limits = address_limits  # None: requests without a valid credential are not limited
        self.draining = False

    @classmethod
    def from_settings(cls, settings: Settings) -> Gateway:
        """The gateway's limits from `http`, `memory` and `agents.feed` (config/lorebase.example.yaml)."""
        unauthenticated = settings.section("http.unauthenticated_rate_limit")
        return cls(
            max_body_bytes=int(settings.get("http.max_body_bytes", 1048576)),
            max_import_body_bytes=int(settings.get("http.max_import_body_bytes", 268435456)),
            max_memory_body_bytes=int(settings.get("memory.max_body_bytes", 65536)),
            heartbeat_s=float(settings.get("agents.feed.heartbeat_s", 15)),
            stream_caps=StreamCaps(
                per_principal=int(settings.get("agents.feed.max_streams_per_principal", 20)),
                total=int(settings.get("agents.feed.max_streams", 2000)),
            ),
            address_limits=AddressLimits(
                per_second=float(unauthenticated.get("per_second", 5)),
                burst=float(unauthenticated.get("burst", 50)),
            )
            if unauthenticated.get("enabled", True)
            else None,
        )

    @property
    def feed(self) -> FeedClient:
        return self.fanout.feed

    @feed.setter
    def feed(self, client: FeedClient) -> None:
        self.fanout.feed = client  # the event streams use the same client

    @property
    def streams(self) -> set[Follower]:
        """The open event streams."""
        return self.fanout.followers

    def drain(self) -> None:
        """The gateway is stopping: end every open event stream (clients reconnect with
        Last-Event-ID) and refuse new ones, so that in-flight requests can finish in the grace period."""
        self.draining = True
        self.fanout.drain()

    async def degraded(self) -> dict[str, str]:
        """Services that answer but do not work as they should, with the reason (for /health): the
        feed when its relay has fallen behind (nats.relay.degraded_after_s)."""
        try:  # liveness is the health checks' job: a Status that does not answer says nothing here
            status = await asyncio.wait_for(self.feed.status(), HEALTH_CHECK_TIMEOUT_S)
        except Exception:
            return {}
        return {"feed": status.degraded} if status.degraded else {}

    def connect_memory(self, memory: MemoryStoreClient, journal: MemoryJournalClient) -> None:
        """Agent memory's clients: MemoryStore on keeper's address, MemoryJournal on feed's."""
        self.memory, self.journal = memory, journal
        self._memory_clients = (memory, journal)

    def connect(self, keeper: KeeperClient, feed: FeedClient, scribe: ScribeClient) -> None:
        self.keeper, self.feed, self.scribe = keeper, feed, scribe

    async def close(self) -> None:
        await self.fanout.close()
        for client in (self.keeper, self.feed, self.scribe, *(self._memory_clients or ())):
            await client.close()

    async def body(
        self,
        request: Request,
        *,
        limit: int | None = None,
        setting: str = "http.max_body_bytes",
        allow_empty: bool = False,
    ) -> bytes:
        limit = limit or self.max_body_bytes
        too_large = Problem(413, "too-large", f"the body is over {limit} bytes ({setting}); send less")
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise too_large
        chunks = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise too_large
                chunks.append(chunk)
        except ClientDisconnect:
            # The client went away, or the body missed http.body_timeout_s and the protocol has
            # answered 408 and closed the connection: this answer goes nowhere.
            raise Problem(408, "request-timeout", "the request body did not arrive; send all of it") from None
        data = b"".join(chunks)
        content_type = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if (
            data
            and content_type not in ("application/json", "application/problem+json", "")
            and not content_type.endswith("+json")
        ):
            raise Problem(
                415, "unsupported-media-type", f"send the body as application/json, not {content_type}"
            )
        if not data:
            if allow_empty:
                return b"{}"
            raise Problem(400, "malformed-json", "the request needs a JSON object body")
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise Problem(400, "malformed-json", f"the body is not valid JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            raise Problem(400, "malformed-json", "the body must be a JSON object")
        return data


def credential(request: Request) -> str:
    value = request.headers.get("authorization")
    if not value:
        raise Problem(401, "unauthenticated", "send a credential as 'Authorization: Bearer <key>'")
    return value


def flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name)
    if value is None:
        return False
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no", ""):
        return False
    raise Problem(400, "invalid-parameter", f"{name} is true or false, not {value!r}", parameter=name)


def integer(request: Request, name: str) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return 0
    if not value.isdigit():
        raise Problem(400, "invalid-parameter", f"{name} is a whole number, not {value!r}", parameter=name)
    return int(value)


Route = Callable[[Request], Awaitable[Response]]


def handled(route: Route) -> Route:
    """Turn every Problem a route raises into a problem-details answer; refuse the request first
    when its address has spent its allowance of requests without a valid credential."""

    async def wrapper(request: Request) -> Response:
        session = request.headers.get("lorebase-session")
        token = SESSION.set(session or None)
        limits: AddressLimits | None = request.app.state.gateway.address_limits
        try:
            if limits is not None:
                limits.admit(request)
            response = await route(request)
        except Problem as problem:
            response = problem_response(problem)
        finally:
            SESSION.reset(token)
        if limits is not None:
            limits.observe(request, response.status_code)
        return response

    wrapper.__name__ = route.__name__
    return wrapper


class _App(FastAPI):
    """FastAPI, keeping the server's own `send` in the scope (SERVER_SEND).

    The event streams write their frames with it: every middleware only looks at the start of a
    response, and with 1,000 clients of a branch the four wrappers around `send` cost a tenth of the
    gateway's time per commit (lorebase_gateway.fanout)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)


class _Route(StarletteRoute):
    """A Starlette route that names itself in the scope (`scope["route"]`, which FastAPI's router
    sets only for its own routes): the metrics label requests by its path template."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match != Match.NONE:
            child["route"] = self
        return match, child


def add_route(app: FastAPI, path: str, method: str, endpoint: Route) -> None:
    """Add a route to Starlette's router directly. The endpoints take only the Request, so FastAPI's
    dependency machinery (APIRoute) would add nothing but about 100 µs per request."""
    app.router.routes.append(_Route(path, endpoint, methods=[method]))


def routes_of(app: FastAPI) -> Callable[[str, str], Callable[[Route], Route]]:
    """The `@route(path, method)` decorator of a group of routes: each answers its Problems as
    problem details (`handled`)."""

    def route(path: str, method: str) -> Callable[[Route], Route]:
        def decorate(fn: Route) -> Route:
            add_route(app, path, method, handled(fn))
            return fn

        return decorate

    return route


def create_app(gateway: Gateway, *, metrics: bool = False) -> FastAPI:
    """The REST app; `metrics` adds `GET /metrics` on the API port (http.metrics_on_api_port; the
    metrics listener, http.metrics_listen, is the place for it)."""
    from lorebase_gateway.observe import RequestObserver, metrics_endpoint
    from lorebase_gateway.routes import register

    app = _App(title="Lorebase", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.gateway = gateway
    app.add_middleware(RequestObserver)
    if metrics:
        add_route(app, "/metrics", "GET", metrics_endpoint)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return problem_response(
                Problem(
                    404, "not-found", f"no such endpoint: {request.method} {request.url.path}; see README.md"
                )
            )
        if exc.status_code == 405:
            return problem_response(
                Problem(405, "method-not-allowed", f"{request.method} is not allowed on {request.url.path}")
            )
        return problem_response(Problem(exc.status_code, "error", str(exc.detail)))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return problem_response(Problem(400, "invalid-request", str(exc.errors())))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        return problem_response(Problem(500, "internal", "the gateway failed; the error is in its log"))

    @app.get("/health")
    async def health() -> Response:
        # All at once, each bounded by its deadline: a service that is down or hangs costs at most
        # HEALTH_CHECK_TIMEOUT_S, and the 503 names it (`lorebase up` restarts it meanwhile).
        clients = {"keeper": gateway.keeper, "feed": gateway.feed, "scribe": gateway.scribe}
        answers = await asyncio.gather(
            *(client.healthy(timeout_s=HEALTH_CHECK_TIMEOUT_S) for client in clients.values())
        )
        checks = dict(zip(clients, answers, strict=True))
        if all(checks.values()):
            body: dict[str, Any] = {"status": "ok", "version": __version__}
            degraded = await gateway.degraded()
            if degraded:
                body = {"status": "degraded", "version": __version__, "degraded": degraded}
            return Response(orjson.dumps(body), media_type="application/json")
        body = {"status": "unavailable", "version": __version__, "services": checks}
        return Response(orjson.dumps(body), status_code=503, media_type="application/json")

    register(app, gateway)
    return app


__all__ = [
    "Gateway",
    "answer_response",
    "create_app",
    "credential",
    "flag",
    "handled",
    "integer",
    "problem_response",
]
