"""The feed service in the integration stack: its servicer on a gRPC port with the relay and the
hub on a fresh JetStream stream of the session's NATS, and the gateway's feed client pointed at it.
The relay publishes on typed subjects under `prefix` and, as by default, legacy ones under
`legacy_prefix` (lorebase_feed.subjects)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from lorebase_feed.api import FeedServicer
from lorebase_feed.hub import Hub
from lorebase_feed.relay import Relay, connect_nats, ensure_stream
from lorebase_feed.subjects import Subjects
from nats.aio.client import Client as NATS

from lorebase.clients import ClientSettings, FeedClient, KeeperClient
from lorebase.config import load_settings
from lorebase.grpc_serve import new_server
from lorebase.v1 import feed_pb2_grpc
from tests.integration.conftest import ADMIN_KEY, Stack

FEED_SETTINGS = {
    "LOREBASE_AGENTS__FEED__HEARTBEAT_S": "0.5",
    "LOREBASE_AGENTS__FEED__POLL_INTERVAL_S": "0.2",
    "LOREBASE_AGENTS__FEED__REAUTHORIZE_INTERVAL_S": "0.5",
    "LOREBASE_AGENTS__FEED__MAX_CONNECTION_S": "60",
}


@dataclass
class Feed:
    servicer: FeedServicer
    relay: Relay
    hub: Hub
    client: FeedClient
    nc: NATS
    stream: str
    subjects: Subjects

    @property
    def prefix(self) -> str:
        """The typed subjects' prefix."""
        return self.subjects.prefix

    @property
    def legacy_prefix(self) -> str:
        return self.subjects.legacy_prefix


@contextlib.asynccontextmanager
async def running_feed(
    stack: Stack, nats_url: str, relay: bool = True, settings: dict[str, str] | None = None
) -> AsyncIterator[Feed]:
    nc = await connect_nats(nats_url)
    js = nc.jetstream()
    stream, suffix = "T" + uuid.uuid4().hex[:10].upper(), uuid.uuid4().hex[:10]
    subjects = Subjects("t" + suffix, "u" + suffix)
    await ensure_stream(js, stream, subjects)
    hub = Hub()
    await hub.start(js, stream=stream, prefix=subjects.prefix)
    the_relay = Relay(stack.rt.db, js, subjects=subjects, interval_s=0.05, stream=stream)
    keeper = KeeperClient(stack.keeper_address)
    loaded = load_settings(
        {
            "LOREBASE_DATABASE_URL": stack.database_url,
            "LOREBASE_ADMIN_KEY": ADMIN_KEY,  # the operator's credential (Feed.Status), as `lorebase up` sets it
            **FEED_SETTINGS,
            **(settings or {}),
        }
    )
    servicer = FeedServicer(
        stack.rt.db, stream=stream, keeper=keeper, hub=hub, fence=the_relay.fence, settings=loaded
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = new_server()
    feed_pb2_grpc.add_FeedServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    client = FeedClient(ClientSettings(address=f"127.0.0.1:{port}", deadline_s=30))
    previous = stack.gateway.feed
    stack.gateway.feed = client
    stop = asyncio.Event()
    task = asyncio.create_task(the_relay.run(stop)) if relay else None
    try:
        yield Feed(servicer, the_relay, hub, client, nc, stream, subjects)
    finally:
        stack.gateway.feed = previous
        stop.set()
        if task is not None:
            await task
        await client.close()
        await server.stop(None)
        await hub.stop()
        await keeper.close()
        with contextlib.suppress(Exception):
            await js.delete_stream(stream)
        await nc.close()
