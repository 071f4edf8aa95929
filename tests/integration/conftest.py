"""The stack of the integration tests: keeper over gRPC on a fresh database clone, and the gateway app
in front of it, all in the test's event loop (real PostgreSQL, real gRPC, the real ASGI app)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import pytest_asyncio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from lorebase_feed.memory import MemoryJournalServicer
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from lorebase_keeper.admin import bootstrap_admin
from lorebase_keeper.api import KeeperServicer, MemoryStoreServicer
from lorebase_keeper.runtime import Runtime

from lorebase.clients import (
    ClientSettings,
    FeedClient,
    KeeperClient,
    MemoryJournalClient,
    MemoryStoreClient,
    ScribeClient,
)
from lorebase.config import load_settings
from lorebase.embedded import create_database, drop_database
from lorebase.grpc_serve import new_server
from lorebase.schema import parse_yaml
from lorebase.v1 import keeper_pb2_grpc, memory_pb2_grpc
from lorebase_store import Database
from tests.conftest import database_name

ADMIN_KEY = "test-admin-key-0123456789"
SUPPLY = Path(__file__).resolve().parents[2] / "examples" / "supply"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    rt: Runtime
    http: httpx.AsyncClient
    keeper: KeeperClient
    database_url: str
    gateway: Gateway
    keeper_address: ClientSettings

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {ADMIN_KEY}"}

    async def principal(self, principal: str, *, type: str = "user") -> dict[str, str]:
        """Create a principal with a key; the headers that authenticate as it."""
        response = await self.http.post(
            "/api/v1/principals", json={"id": principal, "type": type, "name": principal}, headers=self.admin
        )
        assert response.status_code in (201, 409), response.text
        response = await self.http.post(f"/api/v1/principals/{principal}/keys", headers=self.admin)
        assert response.status_code == 201, response.text
        return {"Authorization": f"Bearer {response.json()['key']}"}

    async def grant(
        self,
        domain: str,
        principal: str,
        role: str,
        branches: list[str] | None = None,
        kinds: list[str] | None = None,
    ) -> str:
        body: dict[str, Any] = {"principal": principal, "role": role, "branches": branches or ["*"]}
        if kinds is not None:
            body["kinds"] = kinds
        response = await self.http.post(f"/api/v1/domains/{domain}/grants", json=body, headers=self.admin)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    async def supply(self) -> None:
        """The supply example as `lorebase up --example supply` loads it (import, then update_supplier)."""
        schema = parse_yaml((SUPPLY / "schema.yaml").read_text())
        response = await self.http.post(
            "/api/v1/domains", json={"name": "supply", "schema": schema}, headers=self.admin
        )
        assert response.status_code == 201, response.text
        loader = await self.principal("usr_loader")
        editor = await self.principal("usr_editor")
        await self.grant("supply", "usr_loader", "admin")
        await self.grant("supply", "usr_editor", "editor")
        data = orjson.loads((SUPPLY / "data.json").read_bytes())
        response = await self.http.post(
            "/api/v1/domains/supply/imports",
            json={"source": "examples/supply", "message": "Import the supply example data", **data},
            headers=loader,
        )
        assert response.status_code == 200, response.text
        response = await self.http.post(
            "/api/v1/domains/supply/operations/update_supplier/execute",
            json={"parameters": {"key": "S-1001", "risk_score": 90}, "message": "Raise the risk of S-1001"},
            headers=editor,
        )
        assert response.status_code == 200, response.text

    async def count(self, table: str) -> int:
        from sqlalchemy import text

        async with self.rt.db.engine.connect() as conn:
            return int(await conn.scalar(text(f"select count(*) from {table}")) or 0)


@contextlib.asynccontextmanager
async def open_stack(database_url: str, **overrides: str) -> AsyncIterator[Stack]:
    """Keeper, feed's memory journal and the gateway on `database_url` (already migrated or restored);
    `overrides`: settings as environment variables (LOREBASE_WEB__SESSION_TTL_S="1")."""
    settings = load_settings(
        {"LOREBASE_DATABASE_URL": database_url, "LOREBASE_ADMIN_KEY": ADMIN_KEY, **overrides}
    )
    db = Database.connect(database_url, pool_size=4)
    await db.check_schema()
    rt = Runtime.create(db, settings)
    await bootstrap_admin(rt, ADMIN_KEY)
    port = _free_port()
    server = new_server()
    keeper_pb2_grpc.add_KeeperServicer_to_server(KeeperServicer(rt), server)
    # Agent memory: keeper's MemoryStore and feed's MemoryJournal, in process on the same server.
    memory_pb2_grpc.add_MemoryStoreServicer_to_server(MemoryStoreServicer(rt), server)
    memory_pb2_grpc.add_MemoryJournalServicer_to_server(MemoryJournalServicer(db, rt.limits), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    address = ClientSettings(address=f"127.0.0.1:{port}", deadline_s=30)
    gateway = Gateway.from_settings(settings)
    keeper = KeeperClient(address)
    # Feed and scribe are not part of this stack; their clients point at keeper's port for /health.
    gateway.connect(keeper, FeedClient(address), ScribeClient(address))
    gateway.connect_memory(MemoryStoreClient(address), MemoryJournalClient(address))
    app = create_app(gateway)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://lorebase.test")
    try:
        yield Stack(rt, http, keeper, database_url, gateway, address)
    finally:
        await rt.moves.settled()
        await http.aclose()
        await gateway.close()
        await server.stop(None)
        await db.close()


@pytest_asyncio.fixture
async def stack(database_url: str) -> AsyncIterator[Stack]:
    async with open_stack(database_url) as opened:
        yield opened


@pytest.fixture(scope="session")
def supply_template(postgres_url: str, template_database: str) -> Iterator[str]:
    """A database with the supply example loaded (`Stack.supply`), once per session: a test that
    asks for `supply` gets a clone of it rather than loading the example again (its import, two
    principals, two grants and an Operation cost ~0.5 s per test). The stack that loads it runs
    in its own event loop and is closed before the database serves as a template."""
    name = f"lorebase_supply_{secrets.token_hex(4)}"

    async def load() -> str:
        url = await create_database(postgres_url, name, template=database_name(template_database))
        async with open_stack(url) as opened:
            await opened.supply()
        return url

    with ThreadPoolExecutor(1) as thread:
        url = thread.submit(asyncio.run, load()).result()
    try:
        yield url
    finally:
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, drop_database(postgres_url, name)).result()


@pytest.fixture
def database_template(request: pytest.FixtureRequest, template_database: str) -> str:
    """A test that asks for `supply` (itself or through a fixture) starts on a clone of the
    supply template; any other on the migrated template."""
    if "supply" in request.fixturenames:
        return str(request.getfixturevalue("supply_template"))
    return template_database


@pytest_asyncio.fixture
async def batched(database_url: str) -> AsyncIterator[Stack]:
    """The supply example on a keeper that migrates 10 Records at a time: its 30 Suppliers take 3."""
    async with open_stack(database_url, LOREBASE_KEEPER__SCHEMA_CHANGES__BATCH_RECORDS="10") as opened:
        await opened.supply()
        yield opened


@pytest_asyncio.fixture
async def supply(stack: Stack) -> Stack:
    """The stack on a database holding the supply example (cloned from `supply_template`). Its
    Domain and branches take this test's time as their creation time, as if loaded now: keeper's
    process-wide caches (resolve's value counts and vocabularies, query coverage) tell apart a
    Domain made again under the same id by it, and every clone's Domain has the same id."""
    from sqlalchemy import text

    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("update domains set created_at = clock_timestamp()"))
        await conn.execute(text("update branches set created_at = clock_timestamp()"))
    return stack


async def raise_risk(stack: Stack, score: int) -> str:
    """Set S-1001's risk score through update_supplier as an editor; the Revision it committed."""
    editor = await stack.principal("usr_editor")
    response = await stack.http.post(
        "/api/v1/domains/supply/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1001", "risk_score": score}},
        headers=editor,
    )
    assert response.status_code == 200, response.text
    return str(response.headers["Lorebase-Revision"])


@pytest.fixture
def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_KEY}"}
