"""A real OTLP/gRPC trace receiver for the tests: the collector's TraceService (the
opentelemetry-proto messages), on a loopback port of the test's event loop, keeping every span the
services export with the `service.name` of its resource."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass(frozen=True)
class Received:
    """One exported span: its service, ids (hex), parent id (hex, "" for none), name, kind,
    attributes and status code (0 unset, 1 ok, 2 error)."""

    service: str
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    attributes: dict[str, Any]
    status: int


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


class OtlpReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.spans: list[Received] = []
        self._server: grpc.aio.Server | None = None
        self._arrived = asyncio.Event()

    async def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        Received(
                            service=str(resource.get("service.name", "")),
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            name=span.name,
                            kind=span.kind,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            status=span.status.code,
                        )
                    )
        self._arrived.set()
        return trace_service_pb2.ExportTraceServiceResponse()

    async def start(self) -> str:
        """Listen on a free loopback port; the endpoint for tracing.otlp_endpoint."""
        self._server = grpc.aio.server()
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(None)

    def of_trace(self, trace_id: str) -> list[Received]:
        return [span for span in self.spans if span.trace_id == trace_id]

    async def wait_for(self, done: Callable[[], bool], *, timeout_s: float = 60) -> None:
        """Until `done()` holds after an export (the services export every tracing.export_interval_s)."""
        async with asyncio.timeout(timeout_s):
            while not done():
                self._arrived.clear()
                await self._arrived.wait()


__all__ = ["OtlpReceiver", "Received"]
