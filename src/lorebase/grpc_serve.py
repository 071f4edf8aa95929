"""Running a service: a grpc.aio server with the standard health and reflection services, stopped
cleanly on signals.

Reflection (grpc.reflection.v1alpha, which grpcurl, Postman and Evans ask) lists the service's own
gRPC services and health, so a tool can call them without the .proto files. Health answers SERVING
for "" and for each of the service's gRPC services by full name (`lorebase.v1.Keeper`).

On SIGTERM or SIGINT the health service answers NOT_SERVING, the server refuses new RPCs and gives
the running ones `services.shutdown_grace_s` to finish (then cancels them), and only then do the
service's own parts stop (`on_stop`: job loops, the relay, the database pool). docs/running.md.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from lorebase import event_loop, tracing
from lorebase.metrics import MetricsListener, Refresh, RpcMetricsInterceptor

logger = logging.getLogger("lorebase.serve")

MAX_MESSAGE_BYTES = 320 * 1024 * 1024
# Problems travel in trailing metadata: room for a problem document with its issues.
MAX_METADATA_BYTES = 1024 * 1024


def service_name(module: ModuleType, name: str) -> str:
    """The full name of the gRPC service `name` that the generated `_pb2` module declares."""
    return str(module.DESCRIPTOR.services_by_name[name].full_name)


def new_server() -> grpc.aio.Server:
    """A gRPC server as every Lorebase service runs it (imports may carry large messages), its RPCs
    counted and timed, each call's request id in lorebase.logs.REQUEST_ID; with tracing on, each RPC
    is a span continuing the caller's trace (outermost, so the metrics' exemplars name it)."""
    return grpc.aio.server(
        interceptors=[*tracing.server_interceptors(), RpcMetricsInterceptor()],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ],
    )


async def serve(
    name: str,
    listen: str,
    register: Callable[[grpc.aio.Server], None],
    *,
    services: Sequence[str],
    on_start: Callable[[], Awaitable[None]] | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    grace_s: float = 5.0,
    metrics_listen: str = "",
    metrics_refresh: Refresh | None = None,
    stop: asyncio.Event | None = None,
    loop_lag_ms: float = 0,
) -> int:
    """Serve until SIGINT/SIGTERM (or `stop` is set): register the servicers (`services`: their full
    names, for health and reflection), run `on_start`, answer health checks as SERVING, then stop
    gracefully and run `on_stop`.
    `metrics_listen` (host:port, empty: none) serves /metrics; `loop_lag_ms` above 0 watches the event
    loop's lag (event_loop.watch_lag)."""
    server = new_server()
    register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*services, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    if server.add_insecure_port(listen) == 0:
        logger.error("%s cannot listen on %s", name, listen)
        return 2
    metrics = MetricsListener(metrics_listen, refresh=metrics_refresh) if metrics_listen else None
    if metrics is not None:
        try:
            await metrics.start()
        except OSError as exc:
            logger.error("%s cannot serve metrics on %s: %s", name, metrics_listen, exc)
            return 2
    await server.start()
    if on_start is not None:
        await on_start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    for service in services:
        await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    event_loop.settled()
    watch = asyncio.create_task(event_loop.watch_lag(loop_lag_ms / 1000)) if loop_lag_ms > 0 else None
    logger.info("%s listening on %s%s", name, listen, f", metrics on {metrics_listen}" if metrics else "")
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    if watch is not None:
        watch.cancel()
    logger.info("%s stopping: running RPCs get %g s to finish", name, grace_s)
    await health_servicer.enter_graceful_shutdown()
    await server.stop(grace_s)
    if metrics is not None:
        await metrics.stop()
    if on_stop is not None:
        await on_stop()
    logger.info("%s stopped", name)
    return 0


__all__ = ["MAX_MESSAGE_BYTES", "MAX_METADATA_BYTES", "new_server", "serve", "service_name"]
