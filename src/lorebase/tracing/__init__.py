"""OpenTelemetry traces of every service: one trace from a REST request to its SSE frames and webhooks.

Off by default (`tracing.enabled`): then nothing here installs anything, every helper answers
"nothing" after one module-global check, and a request costs what it cost before. On
(`configure_service_tracing`, called by each service's `main` beside its logging), a process has
a TracerProvider exporting over OTLP/gRPC (lorebase.tracing.setup) and the maintained
instrumentations where they fit: the gateway's ASGI app (the caller's W3C `traceparent` continues;
`traceresponse` answers it), gRPC clients and servers (the context rides in the call's metadata),
asyncpg (a span per statement) and httpx (the webhook POSTs, which carry `traceparent` to the
target). Where no instrumentation can see the hop, the code carries the context itself
(docs/observability.md, "The path of a trace"):

- keeper stores the `traceparent` of each commit with its outbox events (outbox.traceparent);
- the feed's relay publishes each event in a span child of it and puts that span's `traceparent`
  in the NATS message headers; the hub continues it on receipt, and the event stream hands it to
  the gateway in `StreamItem.traceparent`, where each SSE frame written is a span;
- Scribe delivers each webhook in a span child of the event's stored `traceparent`.

Sampling and the errors always kept: lorebase.tracing.sampling.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode  # SpanKind: for callers
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from starlette.applications import Starlette

_PROPAGATOR = TraceContextTextMapPropagator()


class _State:
    """The process's tracer once configured (None: tracing is off)."""

    tracer: trace.Tracer | None = None
    provider: Any = None  # opentelemetry.sdk.trace.TracerProvider


STATE = _State()


def enabled() -> bool:
    """Whether this process traces (configure_tracing ran with tracing.enabled)."""
    return STATE.tracer is not None


def format_traceparent(context: trace.SpanContext) -> str:
    """The W3C `traceparent` of a span context (version 00)."""
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def traceparent(span: Span | None = None) -> str:
    """The `traceparent` of `span` (default: the current span); empty when tracing is off or there
    is no span. An unsampled span's is given too (flags 00): what follows it stays unsampled."""
    if STATE.tracer is None:
        return ""
    context = (span or trace.get_current_span()).get_span_context()
    return format_traceparent(context) if context.is_valid else ""


def trace_id() -> str | None:
    """The current trace id in hex (log lines carry it), None when there is none."""
    if STATE.tracer is None:
        return None
    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None


def exemplar() -> dict[str, str] | None:
    """A histogram exemplar naming the current trace, when it is sampled (so the backend has it)."""
    if STATE.tracer is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not (context.is_valid and context.trace_flags.sampled):
        return None
    return {"trace_id": f"{context.trace_id:032x}"}


def parent_context(value: str) -> Any:
    """The OpenTelemetry context whose remote parent is the `traceparent` `value`."""
    return _PROPAGATOR.extract({"traceparent": value})


def _link(value: str) -> trace.Link:
    return trace.Link(trace.get_current_span(parent_context(value)).get_span_context())


def start(
    name: str,
    parent: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: dict[str, Any] | None = None,
    links: tuple[str, ...] = (),
) -> Span | None:
    """A span child of the `traceparent` `parent`, not made current (the caller ends it); None when
    tracing is off or `parent` is empty (what no traced request caused gets no span). `links`: the
    traceparents of other spans it also serves (the other commits of a group)."""
    if STATE.tracer is None or not parent:
        return None
    return STATE.tracer.start_span(
        name,
        context=parent_context(parent),
        kind=kind,
        attributes=attributes,
        links=[_link(value) for value in links if value] or None,
    )


@contextlib.contextmanager
def follow(
    name: str,
    parent: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: dict[str, Any] | None = None,
    links: tuple[str, ...] = (),
) -> Iterator[Span | None]:
    """`start` as the current span for the block (None when tracing is off or `parent` is empty)."""
    span = start(name, parent, kind=kind, attributes=attributes, links=links)
    if span is None:
        yield None
        return
    with trace.use_span(span, end_on_exit=True):
        yield span


@contextlib.contextmanager
def span(
    name: str, *, kind: SpanKind = SpanKind.INTERNAL, attributes: dict[str, Any] | None = None
) -> Iterator[Span | None]:
    """A span in the current context for the block (None when tracing is off)."""
    if STATE.tracer is None:
        yield None
        return
    with STATE.tracer.start_as_current_span(name, kind=kind, attributes=attributes) as started:
        yield started


def failed(span: Span | None, description: str) -> None:
    """Mark `span` as ended in error (kept even when its trace was not sampled)."""
    if span is not None:
        span.set_status(Status(StatusCode.ERROR, description))


# RPCs traced by the gRPC instrumentation: not health checks, reflection, nor the event streams
# (an hour-long span of no request; each event they carry is a span of its own trace instead).
_UNTRACED_SERVICES = ("grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection")
_UNTRACED_METHODS = ("/lorebase.v1.Feed/Events",)


def _rpc_filter() -> Any:
    from opentelemetry.instrumentation.grpc import filters

    return filters.negate(
        filters.any_of(
            *(filters.service_name(name) for name in _UNTRACED_SERVICES),
            *(filters.full_method_name(name) for name in _UNTRACED_METHODS),
        )
    )


def server_interceptors() -> list[Any]:
    """The gRPC server interceptors of tracing (none when it is off): the caller's context from the
    metadata, a SERVER span per RPC."""
    if STATE.tracer is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor(tracer_provider=STATE.provider, filter_=_rpc_filter())]


def client_interceptors() -> list[Any]:
    """The gRPC client interceptors of tracing (none when it is off): a CLIENT span per call, its
    context in the call's metadata."""
    if STATE.tracer is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return list(aio_client_interceptors(tracer_provider=STATE.provider, filter_=_rpc_filter()))


def add_asgi_middleware(app: Starlette) -> None:
    """The ASGI instrumentation, outermost: a SERVER span per request continuing the caller's
    `traceparent` (lorebase_gateway.observe names it by route template). Not /health and /metrics
    (probes and scrapes), and no span per message sent or received (an event stream's frames are
    spans of their own traces)."""
    if STATE.tracer is None:
        return
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    app.add_middleware(
        OpenTelemetryMiddleware,
        excluded_urls="/health$,/metrics$",
        tracer_provider=STATE.provider,
        exclude_spans=["receive", "send"],
    )


from lorebase.tracing.setup import configure_service_tracing, configure_tracing, shutdown  # noqa: E402

__all__ = [
    "STATE",
    "Span",
    "SpanKind",
    "add_asgi_middleware",
    "client_interceptors",
    "configure_service_tracing",
    "configure_tracing",
    "enabled",
    "exemplar",
    "failed",
    "follow",
    "format_traceparent",
    "parent_context",
    "server_interceptors",
    "shutdown",
    "span",
    "start",
    "trace_id",
    "traceparent",
]
