"""The nats-py consumer of docs/feed.md ("Consume from NATS", examples/nats/consumer.py) against a
real JetStream fed by the relay: it gets each committed event once, with the documented payload,
and a durable consumer started again resumes after what it acknowledged."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.integration.conftest import Stack
from tests.integration.feed_stack import running_feed
from tests.integration.test_feed_changes import raise_risk

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nats" / "consumer.py"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("nats_consumer_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_documented_consumer_reads_each_event_once_and_resumes(
    supply: Stack, nats_url: str
) -> None:
    consumer = example()
    async with running_feed(supply, nats_url) as feed:
        got: list[tuple[str, dict[str, Any]]] = []

        async def handle(subject: str, event: dict[str, Any]) -> None:
            got.append((subject, event))

        async def run(stop_after: int) -> int:
            return int(
                await consumer.consume(
                    nats_url,
                    "supply",
                    "docs-consumer",
                    handle,
                    stream=feed.stream,
                    prefix=feed.prefix,
                    stop_after=stop_after,
                    idle_s=10,
                )
            )

        assert await run(2) == 2  # the example's two commits, published by the relay
        revision = await raise_risk(supply, 77)
        assert await run(1) == 1  # a new process of the same durable consumer: only the new event
    sequences = [event["sequence"] for _, event in got]
    assert sequences == sorted(set(sequences)) and len(got) == 3
    subject, last = got[-1]
    assert subject == f"{feed.prefix}.supply.revision.committed.main"
    assert (last["type"], last["revision"], last["domain"], last["branch"]) == (
        "revision.committed",
        revision,
        "supply",
        "main",
    )
