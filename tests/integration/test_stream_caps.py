"""Caps on event streams through the real gateway server and Feed: one principal's streams (two keys
of it share the cap), the admin's (only the gateway's cap), the gateway's, and a slot given back
when a stream ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
from lorebase_gateway.stream_caps import StreamCaps

from tests.integration.conftest import Stack
from tests.integration.feed_stack import running_feed
from tests.integration.gateway_server import serving

EVENTS = "/api/v1/domains/supply/branches/main/events"


@contextlib.asynccontextmanager
async def opened(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> AsyncIterator[None]:
    """An event stream whose first bytes (`retry:`) have arrived, open until the context ends."""
    async with http.stream("GET", url + EVENTS, headers=headers) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        chunks = response.aiter_bytes()  # held: a dropped iterator is closed, and the stream with it
        await anext(chunks)
        try:
            yield
        finally:
            await response.aclose()


async def test_the_streams_of_a_principal_and_of_a_gateway_are_capped(supply: Stack, nats_url: str) -> None:
    first_key = await supply.principal("usr_watcher")
    second_key = await supply.principal("usr_watcher")  # another key of the same principal
    await supply.grant("supply", "usr_watcher", "viewer")
    other = await supply.principal("usr_other")
    await supply.grant("supply", "usr_other", "viewer")
    caps = supply.gateway.fanout.caps = StreamCaps(per_principal=3, total=6)
    async with (
        running_feed(supply, nats_url),
        serving(supply.gateway) as served,
        httpx.AsyncClient(base_url=served.url, trust_env=False, timeout=20) as http,
        contextlib.AsyncExitStack() as streams,
    ):
        for key in (first_key, first_key, second_key):
            await streams.enter_async_context(opened(http, served.url, key))
        assert caps.of("usr_watcher") == 3

        refused = await http.get(EVENTS, headers=second_key)
        assert refused.status_code == 429, refused.text
        problem = refused.json()
        assert problem["code"] == "too-many-streams" and problem["cap"] == "principal"
        assert "usr_watcher" in problem["detail"] and "max_streams_per_principal" in problem["detail"]
        assert int(refused.headers["Retry-After"]) >= 1
        assert caps.of("usr_watcher") == 3, "a refused stream holds nothing"

        # Another principal has its own cap; the admin is capped only by the gateway's.
        await streams.enter_async_context(opened(http, served.url, other))
        for _ in range(2):
            await streams.enter_async_context(opened(http, served.url, supply.admin))
        assert len(caps) == 6
        refused = await http.get(EVENTS, headers=supply.admin)
        assert refused.status_code == 429, refused.text
        assert refused.json()["cap"] == "gateway" and "agents.feed.max_streams" in refused.json()["detail"]
        assert int(refused.headers["Retry-After"]) >= 1

        await streams.aclose()  # every client goes away: their slots come back
        async with asyncio.timeout(20):
            while len(caps):  # noqa: ASYNC110 (the gateway notices each disconnect on its own)
                await asyncio.sleep(0.05)
        async with opened(http, served.url, second_key):
            assert caps.of("usr_watcher") == 1
