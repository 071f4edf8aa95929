"""Tracing's sampling (lorebase.tracing.sampling) on a TracerProvider of the test's own, exporting to
the SDK's in-memory exporter: the ratio decides where a trace starts, a client span of no request
is dropped, and the spans of an unsampled trace are exported only when one of them failed. And
with tracing off, every helper answers nothing."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from lorebase import tracing
from lorebase.logs import JsonFormatter
from lorebase.tracing.sampling import ErrorKeepingProcessor, RequestSampler


def provider(ratio: float, *, keep_errors: bool = True) -> tuple[TracerProvider, InMemorySpanExporter]:
    exported = InMemorySpanExporter()
    made = TracerProvider(sampler=RequestSampler(ratio, keep_errors=keep_errors))
    made.add_span_processor(
        ErrorKeepingProcessor(exported, schedule_delay_millis=10, keep_errors=keep_errors)
    )
    return made, exported


def names(provider: TracerProvider, exported: InMemorySpanExporter) -> list[str]:
    provider.force_flush()
    return sorted(span.name for span in exported.get_finished_spans())


def test_a_sampled_trace_is_exported_whole() -> None:
    made, exported = provider(1.0)
    tracer = made.get_tracer("t")
    with tracer.start_as_current_span("request", kind=SpanKind.SERVER):
        with tracer.start_as_current_span("statement", kind=SpanKind.CLIENT):
            pass
    assert names(made, exported) == ["request", "statement"]


def test_an_unsampled_trace_is_kept_only_when_a_span_failed() -> None:
    made, exported = provider(0.0)
    tracer = made.get_tracer("t")
    with tracer.start_as_current_span("fine", kind=SpanKind.SERVER):
        with tracer.start_as_current_span("fine child"):
            pass
    assert names(made, exported) == []
    with tracer.start_as_current_span("failed", kind=SpanKind.SERVER) as root:
        with tracer.start_as_current_span("failing child") as child:
            child.set_status(Status(StatusCode.ERROR, "boom"))
        assert not root.get_span_context().trace_flags.sampled  # what it passes on stays unsampled
    assert names(made, exported) == ["failed", "failing child"]


def test_without_keep_errors_an_unsampled_trace_is_not_recorded() -> None:
    made, exported = provider(0.0, keep_errors=False)
    with made.get_tracer("t").start_as_current_span("failed") as span:
        assert not span.is_recording()
    assert names(made, exported) == []


def test_a_client_span_of_no_request_is_dropped() -> None:
    made, exported = provider(1.0)
    tracer = made.get_tracer("t")
    with tracer.start_as_current_span("relay statement", kind=SpanKind.CLIENT) as orphan:
        assert not orphan.is_recording()
    with tracer.start_as_current_span("relay pass", kind=SpanKind.INTERNAL):
        pass
    assert names(made, exported) == ["relay pass"]


def test_a_span_continues_a_stored_traceparent() -> None:
    made, exported = provider(0.0)  # the parent's decision counts, not the ratio
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    span = made.get_tracer("t").start_span("publish", context=tracing.parent_context(parent))
    span.end()
    made.force_flush()
    (published,) = exported.get_finished_spans()
    assert f"{published.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert published.parent is not None and f"{published.parent.span_id:016x}" == "b7ad6b7169203331"


@pytest.mark.skipif(tracing.enabled(), reason="a test before this one turned tracing on in this process")
def test_with_tracing_off_every_helper_answers_nothing() -> None:
    assert tracing.traceparent() == "" and tracing.trace_id() is None and tracing.exemplar() is None
    assert tracing.start("x", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") is None
    with tracing.follow("x", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") as span:
        assert span is None
    assert tracing.server_interceptors() == [] and tracing.client_interceptors() == []
    record = logging.getLogger("t").makeRecord("t", logging.INFO, __file__, 1, "m", (), None)
    assert record.trace_id is None  # type: ignore[attr-defined]
    assert "trace_id" not in JsonFormatter("keeper").format(record)
