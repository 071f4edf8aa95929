"""The outbox relay: committed outbox events to NATS JetStream, exactly once per sequence.

Each unpublished event is published with `Nats-Msg-Id: evt_<sequence>` and then marked published.
A crash between the two republishes it on the next pass and JetStream's duplicate window drops the
copy, so nothing is lost and nothing is delivered twice. The relay publishes only up to the outbox
fence (lorebase_store.fence), so the stream holds the events in sequence order and a reader of the
stream never sees a sequence before a lower one that can still commit. Subjects: docs/feed.md.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError

from lorebase.ids import utc_now
from lorebase_store import Database, OutboxEvent, Txn
from lorebase_store.fence import Fence

logger = logging.getLogger("lorebase.feed.relay")


def subject_for(prefix: str, domain: str, branch: str) -> str:
    """`<prefix>.<domain>.<branch>`: '/' in a branch name becomes a subject level, '.' is %2E."""
    token = (
        branch.replace("%", "%25")
        .replace(".", "%2E")
        .replace("*", "%2A")
        .replace(">", "%3E")
        .replace(" ", "%20")
    )
    return f"{prefix}.{domain}.{token.replace('/', '.')}"


def message_id(sequence: int) -> str:
    return f"evt_{sequence}"


async def ensure_stream(js: JetStreamContext, name: str, prefix: str) -> None:
    config = StreamConfig(
        name=name,
        subjects=[f"{prefix}.>"],
        storage=StorageType.FILE,
        duplicate_window=600.0,
    )
    try:
        await js.add_stream(config)
    except BadRequestError:
        await js.update_stream(config)


class Relay:
    def __init__(
        self, db: Database, js: JetStreamContext, *, prefix: str, batch: int = 500, interval_s: float = 0.2
    ) -> None:
        self.db = db
        self.js = js
        self.prefix = prefix
        self.batch = batch
        self.interval_s = interval_s
        self.published = 0
        self.fence = Fence()

    async def publish_pending(self) -> int:
        """One pass: publish what is committed and unpublished up to the fence, in sequence order
        (so the stream holds events in sequence order); returns how many."""
        upto = await self.fence.advance(self.db)
        events: list[OutboxEvent] = await self.db.read(
            "outbox_unpublished", lambda txn: txn.unpublished(limit=self.batch, upto=upto)
        )
        if not events:
            return 0
        done: list[int] = []
        for event in events:
            document = event.document()
            await self.js.publish(
                subject_for(self.prefix, str(event.event.get("domain", "")), event.branch),
                orjson.dumps(document),
                headers={"Nats-Msg-Id": message_id(event.sequence), "Lorebase-Event": event.type},
            )
            done.append(event.sequence)

        async def mark(txn: Txn) -> None:
            await txn.mark_published(done, utc_now())

        await self.db.run_interaction("outbox_mark_published", mark)
        self.published += len(done)
        return len(done)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                count = await self.publish_pending()
            except Exception:
                logger.exception("outbox relay pass failed; retrying")
                count = 0
            if count < self.batch:
                try:
                    await asyncio.wait_for(stop.wait(), timeout=self.interval_s)
                except TimeoutError:
                    pass


async def connect_nats(url: str) -> NATS:
    client = NATS()
    await client.connect(servers=[url], connect_timeout=5, max_reconnect_attempts=-1, allow_reconnect=True)
    return client


__all__ = ["Relay", "connect_nats", "ensure_stream", "message_id", "subject_for"]
