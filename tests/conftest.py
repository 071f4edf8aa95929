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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from lorebase.embedded import EmbeddedNats, EmbeddedPostgres, create_database, drop_database

# No timing in tests: no deadline per example, and no health check that fails a test because a
# busy machine drew its inputs slowly. CI runs the same examples every time (a failure there is
# reproducible, never a fluke of the draw); a developer's run explores new ones.
hypothesis_settings.register_profile(
    "lorebase", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
hypothesis_settings.register_profile("ci", hypothesis_settings.get_profile("lorebase"), derandomize=True)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "lorebase")


_SCOPE_WIDTH = {"module": 1, "package": 2, "session": 3}
CLUSTER_TESTS = Path(__file__).parent / "cluster"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/cluster (faults, restores and upgrades on the cluster harness: `make test-cluster`) is
    collected only when named on the command line: `make test` and a bare `pytest` leave it out."""
    if collection_path != CLUSTER_TESTS and CLUSTER_TESTS not in collection_path.parents:
        return None
    named = (Path(arg.split("::")[0]).resolve() for arg in config.args)
    return not any(path == CLUSTER_TESTS or CLUSTER_TESTS in path.parents for path in named)


def shared_fixture_group(item: pytest.Item) -> str | None:
    """Where `item` shares a fixture with other tests: the folder or module (a node id) that defines
    the widest-scoped fixture it uses, when that fixture is module, package or session scoped and
    defined below this file (tests/browser's stack and Chromium, tests/e2e's `lorebase up`, a
    module's fixture); None when it uses only function fixtures, pytest's own and the session
    servers defined here."""
    here = Path(__file__).parent.relative_to(item.config.rootpath).as_posix()
    info = getattr(item, "_fixtureinfo", None)
    widest: tuple[int, str] | None = None
    for definitions in info.name2fixturedefs.values() if info else ():
        fixture = definitions[-1]  # the definition this item gets (the closest override)
        width = _SCOPE_WIDTH.get(fixture.scope, 0)
        if width and fixture.baseid not in ("", here) and (widest is None or width > widest[0]):
            widest = (width, fixture.baseid)
    return widest[1] if widest else None


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups in the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `pytest -n N --dist loadgroup` (make test), tests that share a stack run on one worker,
    one after the other: each module-, package- or session-scoped fixture below the root starts once
    per run, not once per worker. Every other test is scheduled on its own. The root's session
    servers (PostgreSQL, NATS, the template database) are each worker's own: free ports and
    temporary directories, nothing shared between workers."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """A worker whose node ids lost their group (xdist 3.8 renames `item._nodeid`, which pytest 9.2
    no longer reads) would schedule every test on its own, each worker starting every shared stack:
    say so rather than run slowly."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest-xdist did not put {item.nodeid} in its group: this pytest and pytest-xdist do not "
                "agree on node ids (see the pins in pyproject.toml)"
            )


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


# Where the session's PostgreSQL and NATS keep their files: a memory file system when the machine has
# one with room to spare (Linux's /dev/shm), else the temporary directory. On a disk file system
# (ext4 here) each test's `CREATE DATABASE ... TEMPLATE` creates some 660 files just after the
# previous test's clone deleted as many, and the kernel's search for a free inode that was not
# recently deleted made each clone cost 0.3-0.6 s of CPU; on tmpfs a clone takes 0.02 s.
SCRATCH_DIR = Path("/dev/shm")
SCRATCH_MIN_FREE = 2 << 30


def scratch_dir() -> str | None:
    """The directory for the session servers' temporary directories: SCRATCH_DIR when it is a
    writable memory file system with SCRATCH_MIN_FREE bytes free (a container's 64 MB /dev/shm is
    not), else None (tempfile's default)."""
    try:
        stats = os.statvfs(SCRATCH_DIR)
    except OSError:
        return None
    if not os.access(SCRATCH_DIR, os.W_OK) or stats.f_bavail * stats.f_frsize < SCRATCH_MIN_FREE:
        return None
    return str(SCRATCH_DIR)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server URL (database `postgres`) on which tests may create databases."""
    external = os.environ.get("LOREBASE_TEST_DATABASE_URL")
    if external:
        yield external
        return
    with (
        tempfile.TemporaryDirectory(prefix="lorebase-test-pg-", dir=scratch_dir()) as directory,
        EmbeddedPostgres(Path(directory)) as server,
    ):
        with ThreadPoolExecutor(1) as thread:  # its own event loop, away from the session's
            thread.submit(asyncio.run, _without_fsync(server.url)).result()
        yield server.url


async def _without_fsync(url: str) -> None:
    """The session's throwaway server skips fsync: cloning and dropping a database per test then
    waits on no disk flush (a shared disk makes those waits long and uneven). The embedded server
    of `lorebase up` keeps fsync on (test_embedded.py checks a server of its own)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute("ALTER SYSTEM SET fsync = off")
        await conn.execute("SELECT pg_reload_conf()")
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """A NATS server URL with JetStream."""
    external = os.environ.get("LOREBASE_TEST_NATS_URL")
    if external:
        yield external
        return
    with (
        tempfile.TemporaryDirectory(prefix="lorebase-test-nats-", dir=scratch_dir()) as directory,
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


@pytest.fixture
def database_template(template_database: str) -> str:
    """The database this test's `database_url` is cloned from: the migrated template (overridden
    where a folder keeps templates with data in them, tests/integration's supply example)."""
    return template_database


@pytest_asyncio.fixture(loop_scope="session")
async def database_url(postgres_url: str, database_template: str) -> AsyncIterator[str]:
    """URL of a fresh clone of the template for this test (dropped afterwards)."""
    name = f"t_{secrets.token_hex(6)}"
    url = await create_database(postgres_url, name, template=database_name(database_template))
    try:
        yield url
    finally:
        await drop_database(postgres_url, name)
