"""Servers for the integration tests: real PostgreSQL and NATS, started once per session.

LOREBASE_TEST_DATABASE_URL (a PostgreSQL server URL; the fixtures create and drop databases on it)
and LOREBASE_TEST_NATS_URL point the fixtures at external servers; without them the embedded servers
run in a temporary directory for the session. The database is migrated once into a template, and
each test gets its own clone (`CREATE DATABASE ... TEMPLATE`, dropped after the test).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from hypothesis import settings as hypothesis_settings

from lorebase.embedded import EmbeddedNats, EmbeddedPostgres, create_database, drop_database

# CI runs the same examples every time (a failure there is reproducible, never a fluke of the
# draw); a developer's run explores new ones.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def nats_publish_answer(
    port: int, token: str | None = None, subject: str = "lorebase.events.supply.main"
) -> str:
    """What a NATS server on 127.0.0.1:`port` answers a raw client that connects (with `token`, if
    any), publishes `{}` to `subject` and pings: `PONG` when it let the client in, `-ERR ...` when not."""
    options: dict[str, object] = {"verbose": False, "pedantic": False}
    if token is not None:
        options["auth_token"] = token
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        assert sock.recv(4096).startswith(b"INFO ")
        publish = f"PUB {subject} 2\r\n{{}}\r\n"
        sock.sendall(f"CONNECT {json.dumps(options)}\r\n{publish}PING\r\n".encode())
        answer = b""
        while b"PONG" not in answer and b"-ERR" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.decode().strip()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server URL (database `postgres`) on which tests may create databases."""
    external = os.environ.get("LOREBASE_TEST_DATABASE_URL")
    if external:
        yield external
        return
    with (
        tempfile.TemporaryDirectory(prefix="lorebase-test-pg-") as directory,
        EmbeddedPostgres(Path(directory)) as server,
    ):
        yield server.url


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """A NATS server URL with JetStream."""
    external = os.environ.get("LOREBASE_TEST_NATS_URL")
    if external:
        yield external
        return
    with (
        tempfile.TemporaryDirectory(prefix="lorebase-test-nats-") as directory,
        EmbeddedNats(Path(directory)) as server,
    ):
        yield server.url


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def template_database(postgres_url: str) -> AsyncIterator[str]:
    """URL of a database migrated to the newest schema, once per session; tests get clones of it."""
    from lorebase_store.migrate import upgrade

    name = f"lorebase_template_{secrets.token_hex(4)}"
    url = await create_database(postgres_url, name)
    try:
        # upgrade() may run its own event loop: give it a thread.
        await asyncio.to_thread(upgrade, url)
        yield url
    finally:
        await drop_database(postgres_url, name)


@pytest_asyncio.fixture(loop_scope="session")
async def database_url(postgres_url: str, template_database: str) -> AsyncIterator[str]:
    """URL of a fresh clone of the template for this test (dropped afterwards)."""
    name = f"t_{secrets.token_hex(6)}"
    url = await create_database(postgres_url, name, template=database_name(template_database))
    try:
        yield url
    finally:
        await drop_database(postgres_url, name)
