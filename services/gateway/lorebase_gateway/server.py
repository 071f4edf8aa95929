"""`lorebase gateway`: the REST surface and the event streams (uvicorn).

On SIGTERM or SIGINT it stops accepting connections, ends every open event stream cleanly (the
client reconnects elsewhere with Last-Event-ID), and gives the requests in flight
`http.shutdown_grace_s` to finish before they are cancelled; then its gRPC channels close."""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import AsyncIterator

import uvicorn
from fastapi import FastAPI

from lorebase import event_loop
from lorebase.clients import (
    ClientSettings,
    FeedClient,
    KeeperClient,
    MemoryJournalClient,
    MemoryStoreClient,
    ScribeClient,
)
from lorebase.config import Settings
from lorebase.logs import configure_service_logging
from lorebase_gateway.app import Gateway, create_app

logger = logging.getLogger("lorebase.gateway")


class _Server(uvicorn.Server):
    """uvicorn, ending the event streams first when it shuts down (they would hold the grace period)."""

    def __init__(self, config: uvicorn.Config, gateway: Gateway) -> None:
        super().__init__(config)
        self.gateway = gateway

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        logger.info("gateway stopping: %d event streams end now", len(self.gateway.streams))
        self.gateway.drain()
        await super().shutdown(sockets)


def build_app(settings: Settings) -> FastAPI:
    """The app; its gRPC clients are made on startup, inside the server's event loop."""
    deadline = float(settings.get("services.deadline_s", 30))
    bulk_deadline = float(settings.get("services.bulk_deadline_s", 600))

    def client_settings(name: str) -> ClientSettings:
        return ClientSettings(
            address=str(settings.get(f"services.{name}.address")),
            deadline_s=deadline,
            bulk_deadline_s=bulk_deadline,
        )

    gateway = Gateway(
        max_body_bytes=int(settings.get("http.max_body_bytes", 1048576)),
        max_import_body_bytes=int(settings.get("http.max_import_body_bytes", 268435456)),
        max_memory_body_bytes=int(settings.get("memory.max_body_bytes", 65536)),
        heartbeat_s=float(settings.get("agents.feed.heartbeat_s", 15)),
    )
    app = create_app(gateway, metrics=bool(settings.get("http.metrics", True)))

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        gateway.connect(
            KeeperClient(client_settings("keeper")),
            FeedClient(client_settings("feed")),
            ScribeClient(client_settings("scribe")),
        )
        gateway.connect_memory(
            MemoryStoreClient(client_settings("keeper")), MemoryJournalClient(client_settings("feed"))
        )
        event_loop.settled()
        yield
        await gateway.close()

    app.router.lifespan_context = lifespan
    return app


def main(settings: Settings) -> int:
    configure_service_logging("gateway", settings)
    app = build_app(settings)
    config = uvicorn.Config(
        app,
        host=str(settings.get("http.host")),
        port=int(settings.get("http.port")),
        log_config=None,  # uvicorn's records go through the service's handler (JSON or text)
        log_level="warning",
        access_log=False,
        loop="uvloop",
        http="httptools",
        timeout_graceful_shutdown=int(settings.get("http.shutdown_grace_s", 10)),
    )
    server = _Server(config, app.state.gateway)
    try:
        event_loop.run(server.serve())
    except KeyboardInterrupt:
        pass
    return 0


__all__ = ["build_app", "main"]
