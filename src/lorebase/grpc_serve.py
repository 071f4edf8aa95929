"""Running a service: a grpc.aio server with the standard health service, stopped cleanly on signals."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

logger = logging.getLogger("lorebase.serve")


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


MAX_MESSAGE_BYTES = 320 * 1024 * 1024
# Problems travel in trailing metadata: room for a problem document with its issues.
MAX_METADATA_BYTES = 1024 * 1024


def new_server() -> grpc.aio.Server:
    """A gRPC server as every Lorebase service runs it (imports may carry large messages)."""
    return grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ]
    )


async def serve(
    name: str,
    listen: str,
    register: Callable[[grpc.aio.Server], None],
    *,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    grace_s: float = 5.0,
) -> int:
    """Serve until SIGINT/SIGTERM: register the servicers, answer health checks as SERVING, then stop."""
    server = new_server()
    register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if server.add_insecure_port(listen) == 0:
        logger.error("%s cannot listen on %s", name, listen)
        return 2
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set(f"lorebase.v1.{name.capitalize()}", health_pb2.HealthCheckResponse.SERVING)
    logger.info("%s listening on %s", name, listen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    logger.info("%s stopping", name)
    await health_servicer.enter_graceful_shutdown()
    await server.stop(grace_s)
    if on_stop is not None:
        await on_stop()
    return 0


__all__ = ["MAX_MESSAGE_BYTES", "MAX_METADATA_BYTES", "configure_logging", "new_server", "serve"]
