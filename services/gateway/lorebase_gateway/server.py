"""`lorebase gateway`: the REST surface and the event streams (uvicorn).

On SIGTERM or SIGINT it stops accepting connections, ends every open event stream cleanly (the
client reconnects elsewhere with Last-Event-ID), and gives the requests in flight
`http.shutdown_grace_s` to finish before they are cancelled; then its gRPC channels close.

Requests are read with deadlines (lorebase_gateway.http_protocol). The client address is the socket
peer, or behind `http.trusted_proxies` the one they name in X-Forwarded-For. `GET /metrics` is
served on its own listener, `http.metrics_listen`, like the other services' (empty: none), and on
the API port only with `http.metrics_on_api_port`."""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette

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
from lorebase.metrics import MetricsListener
from lorebase.metrics_scraped import GATEWAY_EVENT_STREAMS
from lorebase.settings_model import Http, ServiceAddress
from lorebase.tracing import configure_service_tracing
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from lorebase_gateway.http_protocol import ReadLimits, timed_protocol

logger = logging.getLogger("lorebase.gateway")


class _Server(uvicorn.Server):
    """uvicorn, ending the event streams first when it shuts down (they would hold the grace period),
    with the gateway's metrics listener (`metrics_listen`, host:port; empty: none) beside it."""

    def __init__(self, config: uvicorn.Config, gateway: Gateway, *, metrics_listen: str = "") -> None:
        super().__init__(config)
        self.gateway = gateway
        self.metrics_listen = metrics_listen
        self.metrics = MetricsListener(metrics_listen) if metrics_listen else None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        if self.metrics is not None:
            try:
                await self.metrics.start()
            except OSError as exc:
                logger.error("gateway cannot serve metrics on %s: %s", self.metrics_listen, exc)
                raise SystemExit(2) from exc
            logger.info("gateway metrics on %s", self.metrics_listen)
        try:
            await super().serve(sockets)
        finally:
            if self.metrics is not None:
                await self.metrics.stop()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        logger.info("gateway stopping: %d event streams end now", len(self.gateway.streams))
        self.gateway.drain()
        await super().shutdown(sockets)


def build_app(settings: Settings) -> Starlette:
    """The app; its gRPC clients are made on startup, inside the server's event loop."""
    services = settings.model.services

    def client_settings(service: ServiceAddress) -> ClientSettings:
        return ClientSettings(
            address=service.address, deadline_s=services.deadline_s, bulk_deadline_s=services.bulk_deadline_s
        )

    gateway = Gateway.from_settings(settings)
    GATEWAY_EVENT_STREAMS.set_function(lambda: len(gateway.streams))
    app = create_app(gateway, metrics=settings.model.http.metrics_on_api_port)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        gateway.connect(
            KeeperClient(client_settings(services.keeper)),
            FeedClient(client_settings(services.feed)),
            ScribeClient(client_settings(services.scribe)),
        )
        gateway.connect_memory(
            MemoryStoreClient(client_settings(services.keeper)),
            MemoryJournalClient(client_settings(services.feed)),
        )
        event_loop.settled()
        yield
        await gateway.close()

    app.router.lifespan_context = lifespan
    return app


def read_limits(http: Http) -> ReadLimits:
    """The deadlines and the header cap of reading a request (`http.*`)."""
    return ReadLimits(
        header_timeout_s=http.header_timeout_s,
        body_timeout_s=http.body_timeout_s,
        body_min_bytes_per_s=http.body_min_bytes_per_s,
        max_header_bytes=http.max_header_bytes,
    )


def server_for(app: Starlette, settings: Settings, **config: object) -> _Server:
    """The gateway's uvicorn server for `app` as `lorebase gateway` runs it (`config`: overrides of
    uvicorn.Config's arguments, e.g. a port)."""
    http = settings.model.http
    trusted = list(http.trusted_proxies)
    options: dict[str, object] = {
        "host": http.host,
        "port": http.port,
        "log_config": None,  # uvicorn's records go through the service's handler (JSON or text)
        "log_level": "warning",
        "access_log": False,
        "loop": "uvloop",
        "http": timed_protocol(read_limits(http)),
        # X-Forwarded-For and -Proto count only from the trusted proxies; by default from no one.
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,
        "timeout_graceful_shutdown": int(http.shutdown_grace_s),
        **config,
    }
    uvicorn_config = uvicorn.Config(app, **options)  # type: ignore[arg-type]
    return _Server(uvicorn_config, app.state.gateway, metrics_listen=http.metrics_listen)


def main(settings: Settings) -> int:
    configure_service_logging("gateway", settings)
    configure_service_tracing("gateway", settings)
    app = build_app(settings)
    server = server_for(app, settings)
    try:
        event_loop.run(server.serve())
    except KeyboardInterrupt:
        pass
    return 0


__all__ = ["build_app", "main", "read_limits", "server_for"]
