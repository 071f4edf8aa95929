"""The NATS users of deploy/helm/nats-values.yaml, on a real nats-server configured with the file's
`authorization` block (rendered as the NATS chart renders `config.merge`: `<< $NAME >>` unquoted,
the passwords from the environment): the feed does its whole job as `lorebase-feed` (stream create
and update, relay publishes on the typed and the legacy subjects, the hub's ordered consumer), and
the documented consumer (examples/nats/consumer.py) reads its Domain as `supply-reader`, also one
event type of it (a filter the server applies), and nothing more."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import nats
import pytest
import yaml
from lorebase_feed.hub import Hub
from lorebase_feed.relay import Relay, connect_nats, ensure_stream
from lorebase_feed.subjects import Subjects
from nats.js.api import AckPolicy, ConsumerConfig
from sqlalchemy import text

from lorebase.embedded._process import _stop_process, free_port, owned_child
from lorebase.embedded.nats import nats_server_binary
from tests.integration.conftest import Stack

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "deploy" / "helm" / "nats-values.yaml"
CONSUMER = ROOT / "examples" / "nats" / "consumer.py"
# The names the file's permissions are written for: stream, typed and legacy subject prefixes.
STREAM, PREFIX, LEGACY = "LOREBASE", "lorebase.domains", "lorebase.events"
SUBJECTS = Subjects(PREFIX, LEGACY)


def server_config(values: dict[str, Any], store: Path) -> str:
    """The nats-server configuration the chart makes of these values (the parts Lorebase sets)."""
    jetstream = {"store_dir": str(store), **values["config"]["jetstream"]["merge"]}
    merged = {"jetstream": jetstream, **values["config"]["merge"]}
    text = json.dumps(merged, indent=2)
    return re.sub(r'"<< (\$[A-Za-z_][A-Za-z0-9_]*) >>"', r"\1", text)


@dataclass
class Server:
    port: int
    passwords: dict[str, str]  # user -> password

    def url(self, user: str) -> str:
        return f"nats://{user}:{self.passwords[user]}@127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    values = yaml.safe_load(VALUES.read_text())
    directory = tmp_path_factory.mktemp("nats-users")
    config = directory / "nats.conf"
    config.write_text(server_config(values, directory / "store"))
    env = {name: secrets.token_hex(12) for name in values["container"]["env"]}
    passwords = {
        "lorebase-feed": env["LOREBASE_FEED_PASSWORD"],
        "supply-reader": env["SUPPLY_READER_PASSWORD"],
    }
    port = free_port()
    log = open(directory / "nats.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [str(nats_server_binary()), "-c", str(config), "-a", "127.0.0.1", "-p", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env=env,
        **owned_child(signal.SIGTERM),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=1) as sock,
            ):
                if sock.recv(5) == b"INFO ":
                    break
            assert process.poll() is None, (directory / "nats.log").read_text()
            assert time.monotonic() < deadline, "nats-server did not start"
            time.sleep(0.05)
        yield Server(port, passwords)
    finally:
        _stop_process(process, signal.SIGTERM, 10)
        log.close()


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("nats_consumer_example", CONSUMER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.asynccontextmanager
async def feed_as_its_user(stack: Stack, server: Server) -> AsyncIterator[Hub]:
    """The feed's NATS side as `lorebase-feed`: stream, hub, relay (publishing the stack's events)."""
    nc = await connect_nats(server.url("lorebase-feed"))
    js = nc.jetstream()
    await ensure_stream(js, STREAM, SUBJECTS)
    await ensure_stream(js, STREAM, SUBJECTS)  # a restart updates the stream: STREAM.UPDATE
    hub = Hub()
    await hub.start(js, stream=STREAM, prefix=PREFIX)
    relay = Relay(stack.rt.db, js, subjects=SUBJECTS, interval_s=0.05, stream=STREAM)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        yield hub
    finally:
        stop.set()
        await task
        await hub.stop()
        await nc.close()


async def wait_for(condition: Any, what: str) -> None:
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_the_feed_and_a_domain_reader_work_with_their_permissions_only(
    supply: Stack, server: Server
) -> None:
    consumer = example()
    reader = server.url("supply-reader")
    inbox = "_INBOX_supply-reader"
    async with feed_as_its_user(supply, server) as hub:
        got: list[tuple[str, dict[str, Any]]] = []

        async def handle(subject: str, event: dict[str, Any]) -> None:
            got.append((subject, event))

        # The supply example committed two Revisions: the relay publishes them as lorebase-feed.
        handled = await consumer.consume(
            reader, "supply", "supply-reader", handle, stop_after=2, idle_s=10, inbox_prefix=inbox
        )
        assert handled == 2
        assert {subject for subject, _ in got} == {f"{PREFIX}.supply.revision.committed.main"}
        assert [event["type"] for _, event in got] == ["revision.committed"] * 2
        # The relay published both copies of each event as lorebase-feed (a refused legacy
        # publish would leave its event unpublished).
        await wait_for_async(lambda: all_published(supply), "the relay to publish every event")
        # The hub's ordered consumer (the event streams) follows the stream as lorebase-feed.
        await hub_receives_a_publish(server, hub)

    # Nor, with the consumer in place: a consumer on every Domain (the legacy create, which carries
    # no filter), the stream's info and messages, publishing events, the inboxes of others (the
    # hub's deliveries of every Domain go to one of the feed's).
    errors: list[str] = []

    async def on_error(error: Exception) -> None:
        errors.append(str(error))

    nc = await nats.connect(reader, inbox_prefix=inbox, error_cb=on_error)
    js = nc.jetstream(timeout=2)
    try:
        # Its consumer may be filtered to one event type of its Domain (the server filters), or to
        # the Domain's deprecated subjects; not to a type of every Domain.
        for allowed in (
            f"{PREFIX}.supply.operation.*.>",
            f"{PREFIX}.supply.revision.committed.>",
            f"{LEGACY}.supply.>",
        ):
            created = await js.add_consumer(
                STREAM,
                config=ConsumerConfig(
                    name="supply-reader",
                    durable_name="supply-reader",
                    filter_subject=allowed,
                    ack_policy=AckPolicy.EXPLICIT,
                ),
            )
            assert created.config.filter_subject == allowed
        with pytest.raises(Exception):  # noqa: B017
            await js.add_consumer(
                STREAM,
                config=ConsumerConfig(  # the CREATE that carries its filter, as nats-py sends it with a name
                    name="supply-reader",
                    durable_name="supply-reader",
                    filter_subject=f"{PREFIX}.*.revision.committed.>",
                    ack_policy=AckPolicy.EXPLICIT,
                ),
            )
        with pytest.raises(Exception):  # noqa: B017
            await js.add_consumer(
                STREAM,
                config=ConsumerConfig(
                    durable_name="supply-reader-all",
                    filter_subject=f"{PREFIX}.>",
                    ack_policy=AckPolicy.EXPLICIT,
                ),
            )
        with pytest.raises(Exception):  # noqa: B017
            await js.stream_info(STREAM)
        with pytest.raises(Exception):  # noqa: B017
            await js.get_msg(STREAM, 1)
        with pytest.raises(Exception):  # noqa: B017
            await js.publish(f"{PREFIX}.supply.revision.committed.main", b"{}", timeout=2)
        with pytest.raises(Exception):  # noqa: B017
            await js.publish(f"{LEGACY}.supply.main", b"{}", timeout=2)
    finally:
        await nc.close()
    assert (
        'nats: permissions violation for publish to "lorebase.domains.supply.revision.committed.main"'
        in errors
    )
    assert 'nats: permissions violation for publish to "lorebase.events.supply.main"' in errors
    answer = raw_answer(server, "supply-reader", "SUB _INBOX.> 1")
    assert 'Permissions Violation for Subscription to "_INBOX.>"' in answer, answer
    assert "Permissions Violation" not in raw_answer(server, "supply-reader", "SUB _INBOX_supply-reader.x 1")


async def all_published(stack: Stack) -> bool:
    async with stack.rt.db.engine.connect() as conn:
        return not await conn.scalar(text("select count(*) from outbox where published_at is null"))


async def wait_for_async(condition: Any, what: str) -> None:
    for _ in range(400):
        if await condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def raw_answer(server: Server, user: str, command: str) -> str:
    """What the server answers a raw client that connects as `user`, sends `command` and pings."""
    options = {"verbose": False, "pedantic": False, "user": user, "pass": server.passwords[user]}
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        assert sock.recv(4096).startswith(b"INFO ")
        sock.sendall(f"CONNECT {json.dumps(options)}\r\n{command}\r\nPING\r\n".encode())
        answer = b""
        while b"PONG" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.decode()


async def hub_receives_a_publish(server: Server, hub: Hub) -> None:
    before = hub.last
    nc = await nats.connect(server.url("lorebase-feed"))
    try:
        js = nc.jetstream()
        event = {"sequence": 10_000, "type": "revision.committed", "domain": "supply", "branch": "main"}
        await js.publish(
            SUBJECTS.typed("supply", "revision.committed", "main"),
            json.dumps(event).encode(),
            headers={"Nats-Msg-Id": "evt_10000.typed"},
        )
    finally:
        await nc.close()
    await wait_for(lambda: hub.last > before, "the hub to receive the publish")


def test_the_durable_config_of_the_example_is_the_one_the_permissions_allow() -> None:
    """The reader's CREATE permission carries the Domain filter the example subscribes with."""
    values = yaml.safe_load(VALUES.read_text())
    users = {u["user"]: u for u in values["config"]["merge"]["authorization"]["users"]}
    allowed = users["supply-reader"]["permissions"]["publish"]["allow"]
    assert f"$JS.API.CONSUMER.CREATE.{STREAM}.supply-reader.{PREFIX}.supply.>" in allowed
    assert f"$JS.API.CONSUMER.CREATE.{STREAM}.supply-reader.{LEGACY}.supply.>" in allowed
    assert not any("DURABLE.CREATE" in subject for subject in allowed)
    assert users["supply-reader"]["permissions"]["subscribe"]["allow"] == ["_INBOX_supply-reader.>"]
