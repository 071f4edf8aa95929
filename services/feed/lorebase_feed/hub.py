"""The hub: one JetStream subscription per feed process, fanned out to the open event streams.

The relay publishes in sequence order up to the outbox fence, so the hub receives the events of the
stream in sequence order. Each open stream has a bounded queue; a stream whose client stops reading
fills it, is marked `lagged` and gets nothing more until it catches up from PostgreSQL, so a slow
client never grows the feed's memory without bound.

The subscription is an ordered consumer with idle heartbeats every `idle_heartbeat_s` (1 s). When
two heartbeats are missed (NATS restarted, the consumer lost), the client recreates the consumer
from the stream sequence after the last one it received, so the hub resumes where it stopped
within a few seconds of NATS coming back, with no gap.

With tracing on, a message whose headers carry a `traceparent` (the relay's publish span) is
received in a span of that trace, whose own `traceparent` goes to the subscribers with the event:
the event stream hands it on to the gateway (lorebase.tracing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

import orjson
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from lorebase import tracing

logger = logging.getLogger("lorebase.feed.hub")


@dataclass(eq=False)
class Subscriber:
    domain: str
    branch: str
    # (event, its JSON as published, its traceparent or ""): the bytes go out as they are, not
    # serialized per stream.
    queue: asyncio.Queue[tuple[dict[str, Any], bytes, str]] = field(
        default_factory=lambda: asyncio.Queue(maxsize=256)
    )
    lagged: bool = False
    # Set on every event of the stream (any branch): a wake-up for streams waiting on PostgreSQL.
    woken: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, event: dict[str, Any], data: bytes, traceparent: str = "") -> None:
        if self.lagged:
            return
        try:
            self.queue.put_nowait((event, data, traceparent))
        except asyncio.QueueFull:
            self.lagged = True
            while not self.queue.empty():
                self.queue.get_nowait()
        self.woken.set()

    def resume(self) -> None:
        """Take events from the hub again (after the caller re-read what it missed)."""
        self.lagged = False


class Hub:
    def __init__(self, *, idle_heartbeat_s: float = 1.0) -> None:
        self.idle_heartbeat_s = idle_heartbeat_s
        self.last = 0  # the highest sequence received from the stream
        self._subscribers: dict[tuple[str, str], set[Subscriber]] = {}
        self._subscription: Any = None

    async def start(self, js: JetStreamContext, *, stream: str, prefix: str) -> None:
        """Follow the typed subjects under `prefix` (nats.domain_subject_prefix): one copy of each
        event, whether legacy copies are published or not."""
        self._subscription = await js.subscribe(
            f"{prefix}.>",
            stream=stream,
            ordered_consumer=True,
            idle_heartbeat=self.idle_heartbeat_s,
            deliver_policy=DeliverPolicy.NEW,
            cb=self._on_message,
        )

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

    async def _on_message(self, msg: Any) -> None:
        try:
            event = orjson.loads(msg.data)
            sequence = int(event["sequence"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            logger.warning("ignoring a message without an event document on %s", msg.subject)
            return
        parent = (msg.headers or {}).get("traceparent", "") if tracing.enabled() else ""
        with tracing.follow(
            "receive outbox event",
            parent,
            kind=tracing.SpanKind.CONSUMER,
            attributes={"messaging.system": "nats", "lorebase.sequence": sequence},
        ) as span:
            self.publish(event, sequence, bytes(msg.data), tracing.traceparent(span) if span else "")

    def publish(
        self, event: dict[str, Any], sequence: int, data: bytes | None = None, traceparent: str = ""
    ) -> None:
        self.last = max(self.last, sequence)
        subscribers = self._subscribers.get((str(event.get("domain")), str(event.get("branch"))), ())
        if subscribers:
            raw = orjson.dumps(event) if data is None else data
            for subscriber in subscribers:
                subscriber.offer(event, raw, traceparent)

    def subscribe(self, domain: str, branch: str) -> tuple[Subscriber, int]:
        """A new subscriber and the last sequence received before it: later events reach its queue."""
        subscriber = Subscriber(domain, branch)
        self._subscribers.setdefault((domain, branch), set()).add(subscriber)
        return subscriber, self.last

    def unsubscribe(self, subscriber: Subscriber) -> None:
        group = self._subscribers.get((subscriber.domain, subscriber.branch))
        if group is not None:
            group.discard(subscriber)
            if not group:
                del self._subscribers[(subscriber.domain, subscriber.branch)]

    @property
    def subscribers(self) -> int:
        return sum(len(group) for group in self._subscribers.values())


__all__ = ["Hub", "Subscriber"]
