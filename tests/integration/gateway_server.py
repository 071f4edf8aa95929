"""The stack's gateway behind a real uvicorn, built as `lorebase gateway` builds it (server_for: the
timed httptools protocol, proxy headers, the metrics listener), on free loopback ports."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from lorebase_gateway.server import server_for

from lorebase.config import load_settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Served:
    port: int
    metrics_port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.asynccontextmanager
async def serving(gateway: Gateway, **settings: str) -> AsyncIterator[Served]:
    """Serve `gateway` with these settings (environment variable names, e.g.
    LOREBASE_HTTP__HEADER_TIMEOUT_S); the metrics listener on a port of its own."""
    port, metrics_port = free_port(), free_port()
    loaded = load_settings(
        {
            "LOREBASE_HTTP__HOST": "127.0.0.1",
            "LOREBASE_HTTP__PORT": str(port),
            "LOREBASE_HTTP__METRICS_LISTEN": f"127.0.0.1:{metrics_port}",
            **settings,
        }
    )
    app = create_app(gateway, metrics=bool(loaded.get("http.metrics_on_api_port")))
    server = server_for(app, loaded, lifespan="off")
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 (uvicorn only sets a flag)
        assert not task.done(), task
        await asyncio.sleep(0.02)
    try:
        yield Served(port, metrics_port)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
