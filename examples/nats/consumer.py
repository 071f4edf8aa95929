"""Consume Lorebase's committed events straight from NATS JetStream with nats-py (docs/feed.md,
"Consume from NATS").

    python examples/nats/consumer.py nats://<token>@127.0.0.1:<port> supply my-consumer
    python examples/nats/consumer.py nats://<token>@127.0.0.1:<port> supply my-flags 'operation.*'
    python examples/nats/consumer.py nats://supply-reader:<password>@nats:4222 supply supply-reader '*.*' _INBOX_supply-reader

A durable pull consumer on the stream (`nats.stream`, default LOREBASE) filtered to one Domain's
subjects and, server-side, to event types: `<nats.domain_subject_prefix>.<domain>.<type>.>`, where
`<type>` is `*.*` (every type), `revision.committed`, `operation.*` or `operation.<side effect>`.
It survives restarts of the consumer process and resumes after the last message it acknowledged.
Delivery is at least once, so events are dropped by their id (`Lorebase-Event-Id: evt_<sequence>`,
the same on every copy of an event; also the payload's `sequence`). A jump in `sequence` within a
branch can mean a message the stream no longer keeps (retention: nats.max_age_s, max_bytes,
max_msgs): resync that branch from `GET .../branches/{b}/changes?since=<last revision>`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

Handler = Callable[[str, dict[str, Any]], Awaitable[None]]


async def consume(
    url: str,
    domain: str,
    durable: str,
    handle: Handler,
    *,
    stream: str = "LOREBASE",
    prefix: str = "lorebase.domains",
    event_type: str = "*.*",
    stop_after: int | None = None,
    idle_s: float = 5.0,
    inbox_prefix: str = "_INBOX",
) -> int:
    """Fetch and handle the Domain's events of `event_type` (a subject filter of two levels:
    `*.*`, `revision.committed`, `operation.*`...), acknowledging each after it is handled; return
    after `stop_after` new events, or after `idle_s` with none when `stop_after` is given. Repeats
    (by `Lorebase-Event-Id`) are acknowledged and skipped. Returns the events handled.
    `inbox_prefix`: where JetStream answers this client; a NATS user limited to its own inboxes
    (deploy/helm/nats-values.yaml: `_INBOX_<user>`) must name them."""
    nc = await nats.connect(url, inbox_prefix=inbox_prefix)
    try:
        js = nc.jetstream()
        subscription = await js.pull_subscribe(
            f"{prefix}.{domain}.{event_type}.>",  # the server filters: only these types arrive
            durable=durable,
            stream=stream,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL),
        )
        seen: set[str] = set()  # a real consumer keeps this (or the last sequence) with its own data
        handled = 0
        while stop_after is None or handled < stop_after:
            try:
                messages = await subscription.fetch(batch=64, timeout=idle_s)
            except NatsTimeout:
                if stop_after is not None:
                    break
                continue
            for message in messages:
                event_id = (message.headers or {}).get("Lorebase-Event-Id", "")
                if event_id not in seen:
                    await handle(message.subject, json.loads(message.data))
                    seen.add(event_id)
                    handled += 1
                await message.ack()
        return handled
    finally:
        await nc.close()


async def _print(subject: str, event: dict[str, Any]) -> None:
    print(event["sequence"], subject, event["type"], event.get("revision", ""), event.get("message", ""))


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6):
        raise SystemExit("usage: consumer.py NATS_URL DOMAIN DURABLE_NAME [EVENT_TYPE [INBOX_PREFIX]]")
    event_type, inbox = (sys.argv[4:] + ["*.*", "_INBOX"][len(sys.argv[4:]) :])[:2]
    asyncio.run(
        consume(sys.argv[1], sys.argv[2], sys.argv[3], _print, event_type=event_type, inbox_prefix=inbox)
    )
