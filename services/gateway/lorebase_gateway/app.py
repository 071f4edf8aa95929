"""The REST app: the declared routes (lorebase_gateway.routes), the contract, and what wraps them.

Routes are thin: each parses its request at the edge, calls its service with the caller's
credential, and sends the answer with `Lorebase-Revision` (and an ETag on reads). Keeper decides
everything else (authorization included); its problems come back as they were raised. Before a
route calls anyone, its client address must not have spent its allowance of requests without a
valid credential (lorebase_gateway.address_limits). Slow requests are cut off below the app, by
the HTTP protocol (lorebase_gateway.http_protocol). The web app's session cookie is read at the
edge (lorebase_gateway.web_session), and its files are served under /app/ (lorebase_gateway.web_app).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.routing import Route as StarletteRoute
from starlette.types import Receive, Scope, Send

from lorebase import tracing
from lorebase.problems import Problem
from lorebase_gateway.fanout import SERVER_SEND
from lorebase_gateway.gateway import Gateway
from lorebase_gateway.observe import RequestObserver, metrics_endpoint
from lorebase_gateway.read_cache import CachedReads
from lorebase_gateway.responses import Route, problem_response
from lorebase_gateway.routes import contract_routes, declared_routes
from lorebase_gateway.security_headers import SecurityHeaders
from lorebase_gateway.web_app import app_routes
from lorebase_gateway.web_session import SessionCookies


class _App(Starlette):
    """Starlette, keeping the server's own `send` in the scope (SERVER_SEND).

    The event streams write their frames with it: every middleware only looks at the start of a
    response, and with 1,000 clients of a branch the four wrappers around `send` cost a tenth of the
    gateway's time per commit (lorebase_gateway.fanout).

    Plain Starlette, not FastAPI: every route is declared in lorebase.contract and takes only the
    Request, so FastAPI's layers (its telemetry and body-limit middlewares, the exit-stack
    middleware, APIRouter) did nothing here but cost about 7% of the gateway's CPU per request
    (docs/performance.md, Reads)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)


class _Route(StarletteRoute):
    """A Starlette route that names itself in the scope (`scope["route"]`): the metrics label
    requests by its path template."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match != Match.NONE:
            child["route"] = self
        return match, child


def add_route(app: Starlette, path: str, method: str, endpoint: Route) -> None:
    """Add a route to Starlette's router directly."""
    app.router.routes.append(_Route(path, endpoint, methods=[method]))


def create_app(gateway: Gateway, *, metrics: bool = False) -> Starlette:
    """The REST app; `metrics` adds `GET /metrics` on the API port (http.metrics_on_api_port; the
    metrics listener, http.metrics_listen, is the place for it)."""
    app = _App()
    app.state.gateway = gateway
    # Innermost: a cached read (lorebase_gateway.read_cache) is answered before Starlette's routing,
    # after the cookie has become a credential and with the observer's request id and metrics.
    app.add_middleware(CachedReads, cache=gateway.read_cache)
    app.add_middleware(SessionCookies)  # inside the observer: its refusals are measured too
    app.add_middleware(RequestObserver)
    app.add_middleware(
        SecurityHeaders
    )  # around the observer: every answer, a refusal of the layers inside too
    cors = gateway.cors
    if cors is not None and cors.allow_origins:  # a preflight is answered before the rest
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors.allow_origins),
            allow_credentials=cors.allow_credentials,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Idempotency-Key",
                "Last-Event-ID",
                "X-CSRF-Token",
            ]
            + ["Cache-Control", "Lorebase-Min-Revision", "Lorebase-Session", "If-None-Match"],
            expose_headers=["Lorebase-Revision", "ETag", "Idempotent-Replayed", "Retry-After", "Location"]
            + ["WWW-Authenticate", "Lorebase-Cache", "Age"],
            max_age=cors.max_age_s,
        )
    tracing.add_asgi_middleware(app)  # outermost, with tracing on: the request's span (lorebase.tracing)
    if metrics:
        add_route(app, "/metrics", "GET", metrics_endpoint)
    for path, method, route in (
        *contract_routes(gateway),
        *declared_routes(gateway),
        *app_routes(gateway.app_files),
    ):
        add_route(app, path, method, route)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 404:
            return problem_response(
                Problem(404, "not-found", f"no such endpoint: {request.method} {request.url.path}; see /docs")
            )
        if exc.status_code == 405:
            return problem_response(
                Problem(405, "method-not-allowed", f"{request.method} is not allowed on {request.url.path}")
            )
        return problem_response(Problem(exc.status_code, "error", str(exc.detail)))

    app.add_exception_handler(StarletteHTTPException, http_error)
    return app


__all__ = ["create_app"]
