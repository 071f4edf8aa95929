"""Each gateway request: its request id (X-Request-Id) and its metrics by route template.

A plain ASGI middleware (no BaseHTTPMiddleware, which would buffer event streams). The request id
is the client's `X-Request-Id` when it is plain and short (lorebase.logs.request_id_from), else a new
one; it is answered in the same header, sent to the services in gRPC metadata and carried by every
log record of the request. With tracing on, the request's span is named by its route template and
its latency observation carries the trace as an exemplar. Metrics are labelled by the matched route's template
(`/api/v1/domains/{domain}/records/{kind}/{key}`), never the raw path, and `unmatched` for 404s.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from opentelemetry import trace
from prometheus_client import REGISTRY
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lorebase import tracing
from lorebase.logs import REQUEST_ID, request_id_from
from lorebase.metrics import HTTP_IN_FLIGHT, HTTP_OBSERVED, exposition

_HEADER = b"x-request-id"
logger = logging.getLogger("lorebase.gateway")


class RequestObserver:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for name, value in scope["headers"]:
            if name == _HEADER:
                given = value.decode("latin-1")
                break
        request_id = request_id_from(given)
        traced = tracing.enabled()
        answered = (_HEADER, request_id.encode())
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", ()), answered]
                if traced:  # before the response ends, which ends the span
                    _name_span(scope["method"], _template(scope))
            await send(message)

        token = REQUEST_ID.set(request_id)
        HTTP_IN_FLIGHT.inc()
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # Logged here, inside the request's context, so that the line carries its request id.
            logger.error("%s %s failed", scope["method"], _template(scope), exc_info=True)
            raise
        finally:
            elapsed = time.perf_counter() - started
            HTTP_IN_FLIGHT.dec()
            template = _template(scope)
            HTTP_OBSERVED.observe((scope["method"], template, str(status)), elapsed, tracing.exemplar())
            REQUEST_ID.reset(token)


def _name_span(method: str, template: str) -> None:
    """The request's span (lorebase.tracing's ASGI middleware) named by its route template, as the
    metrics label it: the raw path would make a span name per Record."""
    span = trace.get_current_span()
    if span.is_recording():
        span.update_name(f"{method} {template}")
        span.set_attribute("http.route", template)


def _template(scope: Scope) -> str:
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"


async def metrics_endpoint(request: Request) -> Response:
    """`GET /metrics`: the gateway's metrics in the Prometheus text format (or OpenMetrics, asked)."""
    encoder, media_type = exposition(request.headers.get("accept", ""))
    return Response(encoder(REGISTRY), media_type=media_type)


__all__ = ["RequestObserver", "metrics_endpoint"]
