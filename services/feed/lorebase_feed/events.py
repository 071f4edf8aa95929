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


# The kinds of Item.
READY = "ready"
EVENT = "event"
HEARTBEAT = "heartbeat"
CAUGHT_UP = "caught_up"


@dataclass(frozen=True)
class Item:
    """One item of a stream: first READY (`sequence`: the position the stream starts after), then
    EVENTs (sequence and JSON document) and HEARTBEATs, or for a control stream CAUGHT_UP."""

    kind: str
    sequence: int = 0
    data: bytes = b""
    traceparent: str = ""  # of an EVENT whose commit was traced (lorebase.tracing)


class _Lifetime:
    """When a stream ends: after max_connection_s, or when re-authorization fails."""

    def __init__(self, limits: StreamLimits, reauthorize: Callable[[], Awaitable[Any]]) -> None:
        self.limits = limits
        self._reauthorize = reauthorize
        started = time.monotonic()
        self.deadline = started + limits.max_connection_s
        self.next_check = started + limits.reauthorize_interval_s

    async def alive(self) -> bool:
        """Whether the stream goes on: re-authorizes the caller when that is due."""
        now = time.monotonic()
        if now >= self.deadline:
            return False
        if now >= self.next_check:
            try:
                await self._reauthorize()
            except Problem:
                return False  # the reconnection answers 401 or 403
            self.next_check = time.monotonic() + self.limits.reauthorize_interval_s
        return True

    def wake_at(self) -> float:
        return min(self.deadline, self.next_check)


def parse_last_event_id(value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 19:
        raise Problem(
            400,
            "invalid-parameter",
            f"Last-Event-ID (or last_event_id) is the sequence of an event, a whole number, not {value!r}",
            parameter="last_event_id",
        )
    return int(value)


async def check_not_ahead(db: Database, access: FeedAccess, last_event_id: int | None) -> None:
    """409 resync-required for a Last-Event-ID that no event ever had: one beyond the last outbox
    sequence handed out (a stream of another installation, or of a database restored from an older
    backup), or one of the sequences skipped after a restore (lorebase_feed.relay: the events the
    restore lost). Without this the stream would wait, silent, for events that never come, or go on
    after a history that is gone."""
    if last_event_id is None:
        return
    skipped = await db.read_one("outbox_sequences_skipped", _sequences_skipped)
    if skipped is not None and skipped[0] <= last_event_id <= skipped[1]:
        raise Problem(
            409,
            "resync-required",
            f"Last-Event-ID {last_event_id} is an event lost when this server's database was restored "
            f"from a backup (events {skipped[0]} to {skipped[1]}); take a new context pack (POST "
            "/context) and follow from its revision without Last-Event-ID",
            branch=access.branch,
            reason="lost-in-restore",
        )
    taken = await db.read_one("outbox_sequence_taken", _sequence_taken)
    if last_event_id > taken:
        raise Problem(
            409,
            "resync-required",
            f"Last-Event-ID {last_event_id} is ahead of every event of this server (the last is {taken}); "
            "take a new context pack (POST /context) and follow from its revision without Last-Event-ID",
            branch=access.branch,
            reason="ahead-of-stream",
        )


async def _sequence_taken(txn: Txn) -> int:
    return await txn.sequence_taken()


async def _sequences_skipped(txn: Txn) -> tuple[int, int] | None:
    return await txn.skipped_sequences()


async def _page(txn: Txn, access: FeedAccess, after: int, upto: int) -> list[OutboxEvent]:
    return await txn.events_after(
        after,
        upto=upto,
        limit=_PAGE,
        domain_id=access.domain_id,
        branch=access.branch,
        types=(REVISION_COMMITTED,),
    )


def _item(
    event: dict[str, Any], kinds: frozenset[str], data: bytes | None = None, traceparent: str = ""
) -> Item | None:
    if event.get("type") != REVISION_COMMITTED or not matches(event, kinds):
        return None
    return Item(EVENT, int(event["sequence"]), orjson.dumps(event) if data is None else data, traceparent)


async def _events_from_postgres(
    db: Database, access: FeedAccess, kinds: frozenset[str], after: int, upto: int
) -> tuple[list[Item], int]:
    """The stream's events after `after` up to a final position (at most one page), and the
    position read through."""
    if upto <= after:
        return [], after
    page = await db.read("feed_stream_events", _page, access, after, upto)
    through = upto if len(page) < _PAGE else page[-1].sequence
    items = (_item(e.document(), kinds, traceparent=e.traceparent or "") for e in page)
    return [i for i in items if i is not None], through


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
    lifetime = _Lifetime(limits, reauthorize)
    last_sent = clock()
    subscriber, seen = hub.subscribe(access.domain, access.branch)
    # Without Last-Event-ID the stream starts after what is final or published now: the next commit.
    cursor = max(opened_at, fence(), seen) if last_event_id is None else last_event_id
    try:
        yield Item(READY, cursor)
        target = max(fence(), seen)
        while True:
            if not await lifetime.alive():
                return
            if subscriber.lagged:
                subscriber.resume()  # no await between these two: events after hub.last are queued
                target = max(target, hub.last)
            if target > cursor:
                caught, cursor = await _events_from_postgres(db, access, kinds, cursor, target)
                for missed in caught:
                    yield missed
                    last_sent = clock()
                continue
            now = clock()
            wait = min(lifetime.wake_at(), last_sent + limits.heartbeat_s, now + limits.poll_interval_s) - now
            live: tuple[dict[str, Any], bytes, str] | None
            try:
                live = subscriber.queue.get_nowait()
            except asyncio.QueueEmpty:
                try:
                    async with asyncio.timeout(max(wait, 0)):  # no task per wait, unlike wait_for
                        live = await subscriber.queue.get()
                except TimeoutError:
                    live = None
            if live is not None:
                event, data, traceparent = live
                sequence = int(event.get("sequence", 0))
                if sequence > cursor:
                    cursor = sequence
                    found = _item(event, kinds, data, traceparent)
                    if found is not None:
                        yield found
                        last_sent = clock()
                continue
            target = max(target, fence())  # quiet: look in PostgreSQL (NATS may be down)
            if target <= cursor and clock() - last_sent >= limits.heartbeat_s:
                yield Item(HEARTBEAT)
                last_sent = clock()
    finally:
        hub.unsubscribe(subscriber)


async def control_stream(
    db: Database,
    hub: Hub,
    fence: Callable[[], int],
    access: FeedAccess,
    *,
    kinds: frozenset[str],
    last_event_id: int | None,
    opened_at: int,
    until: int,
    limits: StreamLimits,
    reauthorize: Callable[[], Awaitable[Any]],
) -> AsyncIterator[Item]:
    """A control stream: the events after Last-Event-ID up to `until` (from PostgreSQL), CAUGHT_UP,
    then nothing until max_connection_s or a failed re-authorization ends it.

    A gateway opens one per client and forwards the live events after `until` from the stream of
    the branch it shares between its clients (docs/feed.md). `until` is a sequence that gateway
    received from a stream, so every event up to it is final."""
    lifetime = _Lifetime(limits, reauthorize)
    cursor = max(opened_at, fence(), hub.last) if last_event_id is None else last_event_id
    yield Item(READY, cursor)
    while cursor < until:
        if not await lifetime.alive():
            return
        caught, cursor = await _events_from_postgres(db, access, kinds, cursor, until)
        for found in caught:
            yield found
    yield Item(CAUGHT_UP, cursor)
    while await lifetime.alive():  # noqa: ASYNC110 (nothing to wait for but the clock)
        await asyncio.sleep(max(lifetime.wake_at() - time.monotonic(), 0))


__all__ = [
    "CAUGHT_UP",
    "EVENT",
    "HEARTBEAT",
    "READY",
    "Item",
    "StreamLimits",
    "control_stream",
    "event_stream",
    "check_not_ahead",
    "parse_last_event_id",
]
