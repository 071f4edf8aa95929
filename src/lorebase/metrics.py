"""Prometheus metrics of every service, the gRPC server interceptor and the `/metrics` listener.

Every service answers `GET /metrics` on a small HTTP listener of its own (`MetricsListener`): the
gateway on `http.metrics_listen` (lorebase_gateway.observe counts the requests by route template;
on the API port only with `http.metrics_on_api_port`), keeper, feed and scribe on
`services.<name>.metrics_listen`; the interceptor counts and times every RPC and puts
the caller's request id in `lorebase.logs.REQUEST_ID` for the call. docs/observability.md lists the
metrics. A scrape that accepts OpenMetrics (Prometheus does when exemplar storage is on) gets it, and
with tracing on the latency histograms carry exemplars naming a sampled trace of each bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

from lorebase import consistency, tracing
from lorebase.logs import REQUEST_ID, REQUEST_ID_METADATA

logger = logging.getLogger("lorebase.rpc")

# Seconds: from a cached read (1 ms) to a large import (minutes).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120)

HTTP_REQUESTS = Counter(
    "lorebase_http_requests",
    "Gateway requests answered, by method, route template and status.",
    ["method", "route", "status"],
)
HTTP_DURATION = Histogram(
    "lorebase_http_request_duration_seconds",
    "Gateway request time until the response ended (an event stream: the connection's life).",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
HTTP_IN_FLIGHT = Gauge("lorebase_http_requests_in_flight", "Gateway requests being answered now.")
HTTP_CUT_OFF = Counter(
    "lorebase_http_cut_off",
    "Gateway connections cut off below the app, by reason: header_timeout, body_timeout, headers_too_large.",
    ["reason"],
)

RPC_HANDLED = Counter(
    "lorebase_grpc_server_handled",
    "RPCs answered, by service, method and status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
RPC_DURATION = Histogram(
    "lorebase_grpc_server_handling_seconds",
    "RPC time until the answer (a server stream: the stream's life), by service, method and code.",
    ["grpc_service", "grpc_method", "grpc_code"],
    buckets=LATENCY_BUCKETS,
)

LOOP_LAG = Histogram(
    "lorebase_event_loop_lag_seconds",
    "How late the event loop's lag probe woke (services.loop_lag_ms): time the loop was held by work "
    "that did not await.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

COMMITS = Counter("lorebase_keeper_commits", "Revisions committed by this keeper process.")

OUTBOX_BACKLOG = Gauge("lorebase_outbox_backlog_events", "Committed outbox events not yet published.")
FEED_PUBLISHED_SEQUENCE = Gauge(
    "lorebase_feed_published_sequence", "The outbox sequence up to which every event is published."
)
FEED_LAST_SEQUENCE = Gauge("lorebase_feed_last_sequence", "The highest committed outbox sequence.")
FEED_LAG_EVENTS = Gauge(
    "lorebase_feed_lag_events", "Outbox sequences between the last committed and the published one."
)
FEED_LAG_SECONDS = Gauge(
    "lorebase_feed_lag_seconds", "Age of the oldest unpublished outbox event (0 when none waits)."
)
FEED_EVENTS_PUBLISHED = Counter(
    "lorebase_feed_events_published", "Outbox events this feed process's relay published to JetStream."
)
FEED_EVENTS_PARKED = Counter(
    "lorebase_feed_events_parked",
    "Outbox events this feed process's relay parked: they could not be published (Feed.Status).",
)
FEED_FENCE_SEQUENCE = Gauge(
    "lorebase_feed_fence_sequence", "The relay's outbox fence (no lower sequence can still commit)."
)

WEBHOOK_DELIVERIES = Counter(
    "lorebase_webhook_deliveries",
    "Webhook delivery attempts by webhook id and outcome: delivered, failed (retried later), dead (given up).",
    ["webhook", "outcome"],
)
# The label is `scribe_job`, not `job`: Prometheus keeps `job` for the scrape target (and would
# rename ours `exported_job`).
SCRIBE_JOB_RUNS = Counter(
    "lorebase_scribe_job_runs", "Scribe job runs by job and outcome.", ["scribe_job", "outcome"]
)
SCRIBE_JOB_DURATION = Histogram(
    "lorebase_scribe_job_duration_seconds",
    "Scribe job run time, by job.",
    ["scribe_job"],
    buckets=LATENCY_BUCKETS,
)
SCRIBE_JOB_LAST_SUCCESS = Gauge(
    "lorebase_scribe_job_last_success_timestamp_seconds",
    "When each Scribe job last ran without an error (Unix time).",
    ["scribe_job"],
)


def _split(full_method: str) -> tuple[str, str]:
    """`/lorebase.v1.Keeper/GetRecord` -> (`lorebase.v1.Keeper`, `GetRecord`)."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method


def _code(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if error is None:
        return "OK"
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    return "UNKNOWN"


def _request_id(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_METADATA:
            return str(value)
    return None


def _set_call_context(context: grpc.aio.ServicerContext) -> None:
    """The caller's request id and read consistency ask (lorebase.consistency) for the call."""
    REQUEST_ID.set(_request_id(context))  # the call's own task: no reset needed
    consistency.ASK.set(consistency.from_metadata(context.invocation_metadata()))


class LabelledPair:
    """A counter and a histogram with the same labels, their children bound once per label values:
    `labels()` locks, checks and looks up on every call, which a hot path pays twice per request."""

    def __init__(self, counter: Counter, histogram: Histogram) -> None:
        self.counter = counter
        self.histogram = histogram
        self._children: dict[tuple[str, ...], tuple[Any, Any]] = {}

    def observe(
        self, labels: tuple[str, ...], seconds: float, exemplar: dict[str, str] | None = None
    ) -> None:
        """Count one more under `labels` and observe `seconds` (with the trace's `exemplar`, if any)."""
        children = self._children.get(labels)
        if children is None:
            children = (self.counter.labels(*labels), self.histogram.labels(*labels))
            if len(self._children) < 10000:  # label values are bounded; this only guards memory
                self._children[labels] = children
        children[0].inc()
        children[1].observe(seconds, exemplar)


RPC_OBSERVED = LabelledPair(RPC_HANDLED, RPC_DURATION)
HTTP_OBSERVED = LabelledPair(HTTP_REQUESTS, HTTP_DURATION)


class _Observed:
    """Counting, timing and request-id setting around one method's behaviour."""

    def __init__(self, full_method: str) -> None:
        self.service, self.method = _split(full_method)

    def done(self, context: grpc.aio.ServicerContext, started: float, error: BaseException | None) -> None:
        code = _code(context, error)
        elapsed = time.perf_counter() - started
        RPC_OBSERVED.observe((self.service, self.method, code), elapsed, tracing.exemplar())
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s/%s %s in %.1f ms", self.service, self.method, code, elapsed * 1000)

    def unary(self, behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def observed(request: Any, context: grpc.aio.ServicerContext) -> Any:
            _set_call_context(context)
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                return await behavior(request, context)
            except BaseException as exc:
                error = exc
                raise
            finally:
                self.done(context, started, error)

        return observed

    def stream(self, behavior: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
        async def observed(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            _set_call_context(context)
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                async for item in behavior(request, context):
                    yield item
            except BaseException as exc:
                error = exc
                raise
            finally:
                self.done(context, started, error)

        return observed


class RpcMetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times each RPC by method and code; sets the caller's request id for the call.

    The wrapped handler of each method is made once and reused: per call, the cost is one
    metadata scan, one ContextVar set and the two metric updates."""

    def __init__(self) -> None:
        self._handlers: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = str(handler_call_details.method)  # type: ignore[attr-defined]
        cached = self._handlers.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(method, handler)
        self._handlers[method] = (handler, wrapped)
        return wrapped

    @staticmethod
    def _wrap(method: str, handler: Any) -> Any:
        observed = _Observed(method)
        if handler.unary_unary is not None:
            return handler._replace(unary_unary=observed.unary(handler.unary_unary))
        if handler.stream_unary is not None:
            return handler._replace(stream_unary=observed.unary(handler.stream_unary))
        for kind in ("unary_stream", "stream_stream"):
            behavior = getattr(handler, kind)
            if behavior is None:
                continue
            if inspect.isasyncgenfunction(behavior):
                return handler._replace(**{kind: observed.stream(behavior)})
            return handler._replace(**{kind: observed.unary(behavior)})  # writes with context.write
        return handler


Refresh = Callable[[], Awaitable[None]]


def exposition(accept: str) -> tuple[Callable[[Any], bytes], str]:
    """The encoder and media type a scrape asked for: OpenMetrics (with exemplars) when its Accept
    header names it, else the Prometheus text format."""
    return choose_encoder(accept)


def _accept(request: bytes) -> str:
    for line in request.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"accept":
            return value.strip().decode("latin-1")
    return ""


class MetricsListener:
    """`GET /metrics` on its own small HTTP listener (`host:port`); `refresh` runs before each answer.

    Plain asyncio (no thread): a refresh may read the database with the service's own pool."""

    def __init__(
        self, listen: str, *, refresh: Refresh | None = None, refresh_timeout_s: float = 5.0
    ) -> None:
        host, _, port = listen.rpartition(":")
        self.host = host.strip("[]") or "0.0.0.0"
        self.port = int(port)
        self.refresh = refresh
        self.refresh_timeout_s = refresh_timeout_s
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        """Listen; returns the port (useful with port 0)."""
        self._server = await asyncio.start_server(self._answer, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            self._server = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                request = await reader.readuntil(b"\r\n\r\n")
            method, _, rest = request.partition(b" ")
            path = rest.partition(b" ")[0].partition(b"?")[0]
            if method not in (b"GET", b"HEAD") or path != b"/metrics":
                status, body, content_type = b"404 Not Found", b"only GET /metrics here\n", b"text/plain"
            else:
                await self._refresh()
                encoder, media_type = exposition(_accept(request))
                status, body, content_type = b"200 OK", encoder(REGISTRY), media_type.encode()
            head = b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (
                status,
                content_type,
                len(body),
            )
            writer.write(head if method == b"HEAD" else head + body)
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _refresh(self) -> None:
        if self.refresh is None:
            return
        try:
            async with asyncio.timeout(self.refresh_timeout_s):
                await self.refresh()
        except Exception:  # the other metrics still answer; the gauges keep their last values
            logger.warning("refreshing the metrics failed", exc_info=True)


__all__ = [
    "COMMITS",
    "LOOP_LAG",
    "FEED_EVENTS_PARKED",
    "FEED_EVENTS_PUBLISHED",
    "FEED_FENCE_SEQUENCE",
    "FEED_LAG_EVENTS",
    "FEED_LAG_SECONDS",
    "FEED_LAST_SEQUENCE",
    "FEED_PUBLISHED_SEQUENCE",
    "HTTP_CUT_OFF",
    "HTTP_DURATION",
    "HTTP_IN_FLIGHT",
    "HTTP_OBSERVED",
    "HTTP_REQUESTS",
    "LATENCY_BUCKETS",
    "RPC_OBSERVED",
    "OUTBOX_BACKLOG",
    "RPC_DURATION",
    "RPC_HANDLED",
    "SCRIBE_JOB_DURATION",
    "SCRIBE_JOB_LAST_SUCCESS",
    "SCRIBE_JOB_RUNS",
    "WEBHOOK_DELIVERIES",
    "LabelledPair",
    "MetricsListener",
    "RpcMetricsInterceptor",
    "exposition",
]
