"""GET /health: 200 with the version and features once every service answers its gRPC health check, 503 before."""

from __future__ import annotations

import asyncio
import socket

import httpx
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway

from lorebase import __version__
from lorebase.clients import ClientSettings, FeedClient, KeeperClient, ScribeClient
from lorebase.embedded import free_port
from tests.integration.conftest import Stack


async def test_health_is_ok_when_every_service_answers(stack: Stack) -> None:
    response = await stack.http.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body == {"status": "ok", "version": __version__, "features": body["features"]}
    # Seed 002: clients check for 0.8.0 (memory feed v1) and 0.9.0 (v2); both are served and said.
    assert tuple(int(part) for part in body["version"].split(".")) >= (0, 9, 0)
    assert body["features"]["memory_feed"] == [1, 2] and body["features"]["tags"] is True


async def test_health_is_503_while_a_service_is_down(stack: Stack) -> None:
    keeper_address = stack.keeper.settings
    dead = ClientSettings(address=f"127.0.0.1:{free_port()}", deadline_s=2)
    gateway = Gateway(max_body_bytes=1024)
    gateway.connect(KeeperClient(keeper_address), FeedClient(dead), ScribeClient(keeper_address))
    app = create_app(gateway)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        response = await client.get("/health")
    await gateway.close()
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["services"] == {"keeper": True, "feed": False, "scribe": True}


async def test_health_names_a_service_that_hangs_and_does_not_hang_itself(stack: Stack) -> None:
    """A service whose port accepts connections but never answers (a process stopped, or wedged):
    each check has its deadline (HEALTH_CHECK_TIMEOUT_S), so /health answers 503 naming it."""
    keeper_address = stack.keeper.settings
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as wedged:
        wedged.bind(("127.0.0.1", 0))
        wedged.listen(8)  # the kernel completes connections; nothing ever reads or answers them
        hanging = ClientSettings(address=f"127.0.0.1:{wedged.getsockname()[1]}", deadline_s=60)
        gateway = Gateway(max_body_bytes=1024)
        gateway.connect(KeeperClient(keeper_address), FeedClient(keeper_address), ScribeClient(hanging))
        app = create_app(gateway)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            response = await asyncio.wait_for(client.get("/health"), timeout=30)
        await gateway.close()
    assert response.status_code == 503
    assert response.json()["services"] == {"keeper": True, "feed": True, "scribe": False}
