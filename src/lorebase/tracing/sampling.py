"""Which spans a service keeps: parent-based ratio sampling, no orphan client spans, errors kept.

- **Parent-based ratio.** A trace starts sampled with probability `tracing.sample_ratio` where it
  starts (a request without a `traceparent`); every span after that follows its parent's decision,
  across services through the `traceparent` they pass on, so a trace is kept whole or not at all.
- **No orphan client spans.** A client span with no parent (a PostgreSQL statement of the relay's
  passes, the fence, a job; a health check's gRPC call) belongs to no request: it is dropped. Their
  cost and volume would drown the requests' traces.
- **Errors always kept** (`tracing.keep_errors`). A span that the ratio drops is still *recorded*
  (RECORD_ONLY); `ErrorKeepingProcessor` holds the ended spans of such traces per trace id until
  the span that started the trace in this process (its local root: no parent, or a remote one)
  ends, and exports them all when one of them ended with an ERROR status, else forgets them. Each
  process decides for its own spans, so an error in keeper keeps keeper's spans, and the gateway's
  5xx keeps the gateway's: the trace id joins them at the backend.

The processor hands kept spans to the OTLP batch through BatchSpanProcessor's private
`_batch_processor.emit` (the public `on_end` skips unsampled spans); the SDK is pinned below its
next minor for it, and tests/unit/test_tracing.py checks it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import (
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
    TraceIdRatioBased,
)
from opentelemetry.trace import Link, SpanKind, StatusCode, get_current_span
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

_DROP = SamplingResult(Decision.DROP)

# Bounds of what the processor holds for unsampled traces (a trace whose local root never ends,
# such as a stream cut off, is forgotten oldest first).
MAX_HELD_TRACES = 2048
MAX_HELD_SPANS_PER_TRACE = 512


class RequestSampler(Sampler):
    """Parent-based ratio sampling; orphan client spans dropped; with `keep_errors`, what the ratio
    drops is recorded for ErrorKeepingProcessor instead."""

    def __init__(self, ratio: float, *, keep_errors: bool) -> None:
        self.ratio = ratio
        self.keep_errors = keep_errors
        self._inner = ParentBased(TraceIdRatioBased(ratio))

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        if kind is SpanKind.CLIENT and not get_current_span(parent_context).get_span_context().is_valid:
            return _DROP
        result = self._inner.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )
        if self.keep_errors and result.decision is Decision.DROP:
            return SamplingResult(Decision.RECORD_ONLY, None, result.trace_state)
        return result

    def get_description(self) -> str:
        return f"RequestSampler{{ratio={self.ratio}, keep_errors={self.keep_errors}}}"


class ErrorKeepingProcessor(BatchSpanProcessor):
    """The OTLP batch of a service: sampled spans as BatchSpanProcessor exports them, and the
    recorded spans of an unsampled trace when its local tree holds an error (module docstring)."""

    def __init__(self, *args: object, keep_errors: bool = True, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.keep_errors = keep_errors
        self._held: OrderedDict[int, tuple[list[ReadableSpan], bool]] = OrderedDict()
        self._lock = threading.Lock()
        self.kept_for_errors = 0  # spans exported because their trace held an error

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is None:
            return
        if context.trace_flags.sampled:
            super().on_end(span)
            return
        if not self.keep_errors:
            return
        failed = span.status.status_code is StatusCode.ERROR
        local_root = span.parent is None or span.parent.is_remote
        with self._lock:
            spans, errored = self._held.pop(context.trace_id, ([], False))
            if len(spans) < MAX_HELD_SPANS_PER_TRACE:
                spans.append(span)
            errored = errored or failed
            if not local_root:
                self._held[context.trace_id] = (spans, errored)
                while len(self._held) > MAX_HELD_TRACES:
                    self._held.popitem(last=False)
                return
        if errored:
            self.kept_for_errors += len(spans)
            for held in spans:
                self._batch_processor.emit(held)

    @property
    def held_traces(self) -> int:
        return len(self._held)


__all__ = ["ErrorKeepingProcessor", "MAX_HELD_SPANS_PER_TRACE", "MAX_HELD_TRACES", "RequestSampler"]
