"""The event stream of one branch: the revision.committed events, missed ones from PostgreSQL and
then live ones from the hub, with no gap and no duplicate at the seam (docs/feed.md).

`cursor` is the highest sequence the stream has dealt with (sent, filtered out, or passed as not
this branch's). It only moves up to a position that is final: the outbox fence, or a sequence the
relay published (the relay publishes in sequence order up to its fence). Events come from:

1. PostgreSQL, `cursor < sequence <= max(fence, hub.last at subscription)` at the start (the hub
   queues every event after `hub.last` from the moment the stream subscribed);
2. the hub's queue, in sequence order, skipping what is at or below `cursor`;
3. PostgreSQL again up to the fence when the hub is quiet for agents.feed.poll_interval_s (NATS
   down or slow) and after the queue overflowed (a client that stopped reading).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from lorebase.problems import Problem
from lorebase_feed.access import FeedAccess, matches
from lorebase_feed.hub import Hub
from lorebase_store import Database, OutboxEvent, Txn

_PAGE = 500
REVISION_COMMITTED = "revision.committed"


@dataclass(frozen=True)
class StreamLimits:
    heartbeat_s: float = 15  # agents.feed.heartbeat_s
    max_connection_s: float = 3600  # agents.feed.max_connection_s
    reauthorize_interval_s: float = 30  # agents.feed.reauthorize_interval_s
    poll_interval_s: float = 1  # agents.feed.poll_interval_s


@dataclass(frozen=True)
class Item:
    """A `revision` event (sequence and JSON document) or, with sequence 0, a heartbeat."""

    sequence: int
    data: bytes = b""

    @property
    def heartbeat(self) -> bool:
        return self.sequence == 0


def parse_last_event_id(value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit() or len(value) > 19:
        raise Problem(
            400,
            "invalid-parameter",
            f"Last-Event-ID (or last_event_id) is the sequence of an event, a whole number, not {value!r}",
            parameter="last_event_id",
        )
    return int(value)


async def _page(txn: Txn, access: FeedAccess, after: int, upto: int) -> list[OutboxEvent]:
    return await txn.events_after(
        after,
        upto=upto,
        limit=_PAGE,
        domain_id=access.domain_id,
        branch=access.branch,
        types=(REVISION_COMMITTED,),
    )


async def event_stream(
    db: Database,
    hub: Hub,
    fence: Callable[[], int],
    access: FeedAccess,
    *,
    kinds: frozenset[str],
    last_event_id: int | None,
    opened_at: int,
    limits: StreamLimits,
    reauthorize: Callable[[], Awaitable[Any]],
) -> AsyncIterator[Item]:
    """The items of one stream until max_connection_s, or until reauthorize raises a Problem.

    `opened_at` is the fence moved when the stream was asked for: without Last-Event-ID the stream
    starts after it (and after what the hub has received), so with the next commit."""
    clock = time.monotonic
    started = clock()
    deadline = started + limits.max_connection_s
    next_check = started + limits.reauthorize_interval_s
    last_sent = started
    subscriber, seen = hub.subscribe(access.domain, access.branch)
    # Without Last-Event-ID the stream starts after what is final or published now: the next commit.
    cursor = max(opened_at, fence(), seen) if last_event_id is None else last_event_id

    def item(event: dict[str, Any], data: bytes | None = None) -> Item | None:
        if event.get("type") != REVISION_COMMITTED or not matches(event, kinds):
            return None
        return Item(int(event["sequence"]), orjson.dumps(event) if data is None else data)

    async def catch_up(upto: int) -> list[Item]:
        """Events after `cursor` up to a final position, from PostgreSQL (at most one page)."""
        nonlocal cursor
        if upto <= cursor:
            return []
        page = await db.read("feed_stream_events", _page, access, cursor, upto)
        if len(page) < _PAGE:
            cursor = upto
        elif page:
            cursor = page[-1].sequence
        return [i for i in (item(e.document()) for e in page) if i is not None]

    try:
        target = max(fence(), seen)
        while True:
            now = clock()
            if now >= deadline:
                return
            if now >= next_check:
                try:
                    await reauthorize()
                except Problem:
                    return  # the reconnection answers 401 or 403
                next_check = clock() + limits.reauthorize_interval_s
            if subscriber.lagged:
                subscriber.resume()  # no await between these two: events after hub.last are queued
                target = max(target, hub.last)
            if target > cursor:
                for caught in await catch_up(target):
                    yield caught
                    last_sent = clock()
                continue
            wait = (
                min(deadline, next_check, last_sent + limits.heartbeat_s, now + limits.poll_interval_s) - now
            )
            live: tuple[dict[str, Any], bytes] | None
            try:
                live = subscriber.queue.get_nowait()
            except asyncio.QueueEmpty:
                try:
                    async with asyncio.timeout(max(wait, 0)):  # no task per wait, unlike wait_for
                        live = await subscriber.queue.get()
                except TimeoutError:
                    live = None
            if live is not None:
                event, data = live
                sequence = int(event.get("sequence", 0))
                if sequence > cursor:
                    cursor = sequence
                    found = item(event, data)
                    if found is not None:
                        yield found
                        last_sent = clock()
                continue
            target = max(target, fence())  # quiet: look in PostgreSQL (NATS may be down)
            if target <= cursor and clock() - last_sent >= limits.heartbeat_s:
                yield Item(0)
                last_sent = clock()
    finally:
        hub.unsubscribe(subscriber)


__all__ = ["Item", "StreamLimits", "event_stream", "parse_last_event_id"]
