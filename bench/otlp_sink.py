"""An OTLP/gRPC trace receiver that counts and drops what it receives: the collector of
`LOREBASE_BENCH_TRACING=1` (bench/run.py), so that tracing is measured exported, as in production,
without a collector's own work on the machine's cores. `python -m bench.otlp_sink PORT`; on exit
it prints the spans received."""

from __future__ import annotations

import signal
import sys
from concurrent import futures
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


class Sink(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.spans = 0

    def Export(self, request: Any, context: Any) -> trace_service_pb2.ExportTraceServiceResponse:
        self.spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
        return trace_service_pb2.ExportTraceServiceResponse()


def main() -> int:
    sink = Sink()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(sink, server)
    server.add_insecure_port(f"127.0.0.1:{sys.argv[1]}")
    server.start()
    signal.sigwait({signal.SIGINT, signal.SIGTERM})
    server.stop(1)
    print(f"otlp sink: {sink.spans} spans received", flush=True)
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    raise SystemExit(main())
