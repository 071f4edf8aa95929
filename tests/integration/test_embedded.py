"""The embedded servers and the session fixtures built on them (tests/conftest.py).

The clone tests use an unmigrated template (overriding `template_database` for this module): they
check the servers and the cloning, not the schema, which test_migrations.py checks.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import nats
import psutil
import pytest
import pytest_asyncio

from lorebase.embedded import (
    EmbeddedNats,
    EmbeddedPostgres,
    EmbeddedServerError,
    create_database,
    drop_database,
    free_port,
)
from tests.conftest import database_name

_clones: list[str] = []


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def template_database(postgres_url: str) -> AsyncIterator[str]:
    name = f"lorebase_template_{secrets.token_hex(4)}"
    url = await create_database(postgres_url, name)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "create table marker (note text not null); insert into marker values ('from the template')"
        )
    finally:
        await conn.close()
    try:
        yield url
    finally:
        await drop_database(postgres_url, name)


@pytest.mark.parametrize("run", [1, 2])
async def test_each_test_gets_a_fresh_clone_of_the_template(
    run: int, postgres_url: str, database_url: str
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("select 1") == 1
        assert await conn.fetch("select note from marker") == [("from the template",)]
        await conn.execute("insert into marker values ('written by the test')")
        assert await conn.fetchval("show fsync") == "on"
    finally:
        await conn.close()
    server = await asyncpg.connect(postgres_url)
    try:
        names = {row["datname"] for row in await server.fetch("select datname from pg_database")}
    finally:
        await server.close()
    assert database_name(database_url) in names
    assert not names & set(_clones), "the clone of an earlier test was not dropped"
    _clones.append(database_name(database_url))


async def test_jetstream_keeps_one_message_per_msg_id(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        stream = f"TEST_{secrets.token_hex(4).upper()}"
        await js.add_stream(name=stream, subjects=[f"{stream.lower()}.>"])
        try:
            first = await js.publish(f"{stream.lower()}.a", b"one", headers={"Nats-Msg-Id": "event-1"})
            again = await js.publish(f"{stream.lower()}.a", b"one", headers={"Nats-Msg-Id": "event-1"})
            assert not first.duplicate
            assert again.duplicate
            assert (await js.stream_info(stream)).state.messages == 1
        finally:
            await js.delete_stream(stream)
    finally:
        await nc.close()


async def _write_then_read(server_url: str, *, write: bool) -> int:
    url = await create_database(server_url, "kept", exist_ok=True)
    conn = await asyncpg.connect(url)
    try:
        if write:
            await conn.execute("create table kept (n int); insert into kept values (1)")
        return int(await conn.fetchval("select count(*) from kept"))
    finally:
        await conn.close()


async def test_postgres_finds_its_data_again_after_a_restart() -> None:
    with tempfile.TemporaryDirectory(prefix="lorebase-test-restart-") as directory:
        data_dir = Path(directory)
        with EmbeddedPostgres(data_dir) as server:
            assert server.url.startswith("postgresql://postgres@127.0.0.1:")
            assert await _write_then_read(server.url, write=True) == 1
            with pytest.raises(EmbeddedServerError, match="already runs on"):
                await asyncio.to_thread(EmbeddedPostgres(data_dir).start)
        assert not (data_dir / "postgres" / "postmaster.pid").exists()
        with EmbeddedPostgres(data_dir) as server:
            assert await _write_then_read(server.url, write=False) == 1
        assert server.poll() is None  # stopped and forgotten


async def test_nats_finds_its_streams_again_after_a_restart() -> None:
    with tempfile.TemporaryDirectory(prefix="lorebase-test-restart-") as directory:
        for restart in (False, True):
            with EmbeddedNats(Path(directory)) as server:
                nc = await nats.connect(server.url)
                try:
                    js = nc.jetstream()
                    if not restart:
                        await js.add_stream(name="KEPT", subjects=["kept.>"])
                        await js.publish("kept.a", b"one")
                    assert (await js.stream_info("KEPT")).state.messages == 1
                finally:
                    await nc.close()


async def test_nats_fsyncs_every_jetstream_write(tmp_path: Path) -> None:
    """The embedded server runs with `jetstream { sync_interval: always }`, as its monitoring
    endpoint reports, and keeps it across a restart."""
    server = EmbeddedNats(tmp_path, http_port=free_port())
    for _ in range(2):
        with server:
            async with httpx.AsyncClient() as client:
                varz = (await client.get(f"http://127.0.0.1:{server.http_port}/varz")).json()
            assert varz["jetstream"]["config"]["sync_always"] is True
            assert varz["jetstream"]["config"]["store_dir"] == str(tmp_path / "nats" / "jetstream")


_OWNER = """
import sys, time
from pathlib import Path
from lorebase.embedded import EmbeddedNats
server = EmbeddedNats(Path(sys.argv[1]))
server.start()
print(server.pid, flush=True)
time.sleep(120)
"""


def test_a_server_does_not_outlive_an_owner_killed_with_sigkill(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    ) as owner:
        assert owner.stdout is not None
        server = psutil.Process(int(owner.stdout.readline()))
        try:
            assert os.getpgid(server.pid) == server.pid  # a Ctrl-C for the owner's group does not reach it
            owner.kill()
            owner.wait()
            server.wait(10)  # raises TimeoutExpired if it outlived its owner
        finally:
            owner.kill()
            if server.is_running():
                server.kill()
