"""`lorebase feed`: the change feed service (outbox relay to JetStream; the event stream comes later)."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from lorebase.config import Settings
from lorebase.grpc_serve import configure_logging, serve
from lorebase.v1 import feed_pb2 as pb
from lorebase.v1 import feed_pb2_grpc, memory_pb2_grpc
from lorebase_feed.memory import MemoryJournalServicer
from lorebase_feed.relay import Relay, connect_nats, ensure_stream
from lorebase_store import Database


class FeedServicer(feed_pb2_grpc.FeedServicer):
    def __init__(self, db: Database, stream: str) -> None:
        self.db = db
        self.stream = stream

    async def Status(self, request: pb.FeedStatusRequest, context: grpc.aio.ServicerContext) -> pb.FeedStatus:
        through, pending = await self.db.read("publication_state", lambda txn: txn.publication_state())
        return pb.FeedStatus(published_through=through, pending=pending, stream=self.stream)


def register(db: Database, stream: str, server: grpc.aio.Server) -> None:
    """Feed's servicers: Feed (publication state) and MemoryJournal (memory changes, checkpoints)."""
    feed_pb2_grpc.add_FeedServicer_to_server(FeedServicer(db, stream), server)
    memory_pb2_grpc.add_MemoryJournalServicer_to_server(MemoryJournalServicer(db), server)


async def run(settings: Settings) -> int:
    url, nats_url = settings.get("database.url"), settings.get("nats.url")
    if not url or not nats_url:
        raise SystemExit("feed needs database.url and nats.url (LOREBASE_DATABASE_URL, LOREBASE_NATS_URL)")
    db = Database.connect(url, pool_size=4)
    await db.check_schema()
    nc = await connect_nats(nats_url)
    js = nc.jetstream()
    stream, prefix = str(settings.get("nats.stream")), str(settings.get("nats.subject_prefix"))
    await ensure_stream(js, stream, prefix)
    relay = Relay(db, js, prefix=prefix)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))

    async def on_stop() -> None:
        stop.set()
        with contextlib.suppress(Exception):
            await task
        # NATS may already be gone (it is stopped after the services, or was killed): a close that fails
        # then has nothing left to flush.
        with contextlib.suppress(Exception):
            await nc.drain()
        await db.close()

    return await serve(
        "feed",
        str(settings.get("services.feed.listen")),
        lambda server: register(db, stream, server),
        on_stop=on_stop,
    )


def main(settings: Settings) -> int:
    configure_logging()
    try:
        return asyncio.run(run(settings))
    except KeyboardInterrupt:
        return 0


__all__ = ["FeedServicer", "main", "register", "run"]
