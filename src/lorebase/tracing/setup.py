"""Turning tracing on in a service process, from the `tracing` settings (docs/observability.md).

One TracerProvider per process (`service.name` lorebase-<service>), sampling by
lorebase.tracing.sampling, spans batched to OTLP/gRPC every `export_interval_s` (no endpoint: spans
are recorded for the log lines' trace ids and the metrics' exemplars, and exported nowhere). The
asyncpg instrumentation (`database_statements`) and the httpx one patch their libraries for the
whole process; the gRPC and ASGI ones are added where servers, channels and the app are made
(lorebase.grpc_serve, lorebase.clients, lorebase_gateway.app), reading `lorebase.tracing.STATE`.
The SDK is imported here only, so a process with tracing off never loads it.
"""

from __future__ import annotations

import logging
from typing import Any

from lorebase.config import Settings
from lorebase.settings_model import Tracing

logger = logging.getLogger("lorebase.tracing")


def _pairs(values: list[str]) -> dict[str, str]:
    """`["a=b", "c=d"]` -> `{"a": "b", "c": "d"}` (the settings' pattern guarantees the `=`)."""
    return dict(value.split("=", 1) for value in values)


def configure_tracing(service: str, settings: Tracing, *, version: str = "") -> bool:
    """Install tracing in this process when `settings.enabled`; whether it is on. Once per process
    (a second call changes nothing)."""
    from lorebase import tracing

    if tracing.STATE.tracer is not None or not settings.enabled:
        return tracing.STATE.tracer is not None
    from opentelemetry import trace
    from opentelemetry.instrumentation.propagators import (
        TraceResponsePropagator,
        set_global_response_propagator,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from lorebase.tracing.sampling import ErrorKeepingProcessor, RequestSampler

    attributes: dict[str, Any] = {
        "service.name": f"lorebase-{service}",
        "service.namespace": "lorebase",
        **_pairs(settings.resource_attributes),
    }
    if version:
        attributes["service.version"] = version
    provider = TracerProvider(
        resource=Resource.create(attributes),
        sampler=RequestSampler(settings.sample_ratio, keep_errors=settings.keep_errors),
    )
    if settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(
            endpoint=settings.otlp_endpoint,
            insecure=settings.otlp_endpoint.startswith("http://"),
            headers=_pairs(settings.otlp_headers) or None,
        )
        provider.add_span_processor(
            ErrorKeepingProcessor(
                exporter,
                max_queue_size=settings.max_queue_spans,
                schedule_delay_millis=settings.export_interval_s * 1000,
                max_export_batch_size=min(512, settings.max_queue_spans),
                keep_errors=settings.keep_errors,
            )
        )
    trace.set_tracer_provider(provider)
    set_global_response_propagator(TraceResponsePropagator())
    if settings.database_statements:
        from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

        AsyncPGInstrumentor().instrument(tracer_provider=provider)
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    tracing.STATE.provider = provider
    tracing.STATE.tracer = provider.get_tracer("lorebase")
    logger.info(
        "tracing on: ratio %g%s, exporting to %s",
        settings.sample_ratio,
        ", errors kept" if settings.keep_errors else "",
        settings.otlp_endpoint or "nowhere (tracing.otlp_endpoint is empty)",
    )
    return True


def configure_service_tracing(service: str, settings: Settings) -> bool:
    """configure_tracing from the `tracing` settings section."""
    from lorebase import __version__

    return configure_tracing(service, settings.model.tracing, version=__version__)


def shutdown() -> None:
    """Export what is batched and stop (also done at exit)."""
    from lorebase import tracing

    if tracing.STATE.provider is not None:
        tracing.STATE.provider.shutdown()


__all__ = ["configure_service_tracing", "configure_tracing", "shutdown"]
