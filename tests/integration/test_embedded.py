"""The embedded servers and the session fixtures built on them (tests/conftest.py).

The clone tests use an unmigrated template (overriding `template_database` for this module): they
check the servers and the cloning, not the schema, which test_migrations.py checks.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
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
    prepare_app_database,
    role_url,
)
from tests.conftest import database_name, nats_publish_answer

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
            assert server.url.startswith("postgresql://postgres:")
            assert await _write_then_read(server.url, write=True) == 1
            # Durable as `lorebase up` runs it (the test session's own server skips fsync).
            conn = await asyncpg.connect(server.url)
            try:
                assert await conn.fetchval("show fsync") == "on"
            finally:
                await conn.close()
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


def _private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_nats_refuses_a_client_without_its_token(tmp_path: Path) -> None:
    """The issue's forged event: a local process published to the embedded NATS with no credential."""
    with EmbeddedNats(tmp_path) as server:
        assert server.port is not None
        assert _private(tmp_path / "nats.token") and _private(tmp_path / "nats.conf")
        token = (tmp_path / "nats.token").read_text().strip()
        assert server.url == f"nats://{token}@127.0.0.1:{server.port}"
        assert nats_publish_answer(server.port) == "-ERR 'Authorization Violation'"
        assert nats_publish_answer(server.port, "not-" + token) == "-ERR 'Authorization Violation'"
        assert nats_publish_answer(server.port, token) == "PONG"
        nc = await nats.connect(server.url)  # as the feed does (connect_nats): the token from the URL
        try:
            await nc.publish("lorebase.events.supply.main", b"{}")
            await nc.flush()
        finally:
            await nc.close()
    with EmbeddedNats(tmp_path) as again:
        assert again.url.startswith(f"nats://{token}@"), "the token is kept in the data dir"


async def test_postgres_asks_every_connection_for_a_password() -> None:
    # A directory of its own, as the restart test's: pytest sets its pytest-of-<user> folder back to
    # 0700 when another session starts, and the postgres user (the server runs as it under root)
    # could then no longer reach a data dir below it.
    with (
        tempfile.TemporaryDirectory(prefix="lorebase-test-password-") as directory,
        EmbeddedPostgres(Path(directory)) as server,
    ):
        data_dir = Path(directory)
        assert _private(data_dir / "postgres-superuser.password")
        password = (data_dir / "postgres-superuser.password").read_text().strip()
        assert server.url == f"postgresql://postgres:{password}@127.0.0.1:{server.port}/postgres"
        # The socket is where the server says (pgdata, or a short directory when that path is too
        # long for a socket, as under pytest-xdist's longer temporary paths).
        conn = await asyncpg.connect(server.url)
        try:
            socket_dir = await conn.fetchval("show unix_socket_directories")
        finally:
            await conn.close()
        for kwargs in (
            {"host": "127.0.0.1", "port": server.port, "user": "postgres", "password": ""},
            {"host": "127.0.0.1", "port": server.port, "user": "postgres", "password": "guess"},
            {"host": str(socket_dir), "port": server.port, "user": "postgres", "password": ""},
        ):
            with pytest.raises(asyncpg.InvalidPasswordError):
                await asyncpg.connect(database="postgres", **kwargs)
        conn = await asyncpg.connect(server.url)
        await conn.close()


async def test_the_application_role_owns_its_database_and_nothing_else(postgres_url: str) -> None:
    """`lorebase up`'s database: also one made before the role existed (its table owned by the
    superuser) is handed over, and the role can write it but not act as a superuser."""
    suffix = secrets.token_hex(4)
    name, role, password = f"app_{suffix}", f"app_role_{suffix}", secrets.token_urlsafe(16)
    url = await create_database(postgres_url, name)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("create table older (n serial primary key, note text)")
    finally:
        await conn.close()
    try:
        app_url = await prepare_app_database(postgres_url, name, role=role, password=password)
        assert app_url == role_url(postgres_url, role, password, name)
        again = await prepare_app_database(postgres_url, name, role=role, password=password)
        assert again == app_url
        app = await asyncpg.connect(app_url)
        try:
            await app.execute("insert into older (note) values ('written by the role')")
            await app.execute("alter table older add column more text")  # it owns it: it can migrate
            assert (
                await app.fetchval(
                    "select rolsuper or rolcreatedb or rolcreaterole from pg_roles where rolname = current_user"
                )
                is False
            )
            assert {r["extname"] for r in await app.fetch("select extname from pg_extension")} >= {
                "pg_trgm",
                "vector",
            }
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await app.execute(f"create database {name}_more")
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await app.execute("create role someone")
        finally:
            await app.close()
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(role_url(postgres_url, role, "guess", name))
        other = await asyncpg.connect(role_url(postgres_url, role, password, "postgres"))
        try:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):  # another database is not its own
                await other.execute("create table intruder (n int)")
        finally:
            await other.close()
    finally:
        await drop_database(postgres_url, name)
        server = await asyncpg.connect(postgres_url)
        try:
            await server.execute(f'drop role if exists "{role}"')
        finally:
            await server.close()


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
