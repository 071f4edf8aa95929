"""The hottest reads, through raw asyncpg prepared statements instead of SQLAlchemy's adapter.

A Record read at a branch head is one indexed statement that PostgreSQL answers in ~0.05 ms; through
SQLAlchemy's async adapter (a pooled AsyncConnection, its execution options, a greenlet hop, an
execution context and a result proxy) keeper spent about as much CPU around the statement as the
rest of the call. Here the same statements run on a small asyncpg pool of their own: each is
prepared once per connection (asyncpg's statement cache) and answered as plain values.

Only single-statement reads belong here: each runs outside a transaction (autocommit), exactly as
`Database.read_one` runs them, so it reads one consistent snapshot of the rows it touches. Anything
that needs several statements to agree goes through `Database.read` (REPEATABLE READ).
The pool opens on first use, with the server settings of the main pool (statement_timeout,
application_name), and closes with the Database.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import asyncpg
import orjson

from lorebase_store.migrate import async_url
from lorebase_store.records import RecordRow
from lorebase_store.unavailable import unavailable_raised

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.standbys import Standbys

_RECORD_AT_HEAD = """
SELECT b.head, b.generation, b.created_at, r.kind, r.key, r."values", r.provenance, r.created_revision, r.updated_revision
  FROM branches b
  LEFT JOIN records r
    ON r.domain_id = b.domain_id AND r.branch = b.name AND r.kind = $3 AND r.key = $4
 WHERE b.domain_id = $1 AND b.name = $2
"""

_BRANCH_HEAD = "SELECT head FROM branches WHERE domain_id = $1 AND name = $2"


@dataclass(frozen=True)
class BranchOrder:
    """Where a head stands on its branch: the branch's creation (a branch deleted and made again
    under the same name starts over) and its generation, which grows by one with every head move,
    each new head a child of the one before. Of two heads of one branch creation, the one with the
    larger generation is the later state (the gateway's read cache orders Revisions by it)."""

    created_at: datetime
    generation: int


async def _json_codecs(conn: asyncpg.Connection) -> None:
    for name in ("json", "jsonb"):
        await conn.set_type_codec(
            name,
            encoder=lambda value: orjson.dumps(value).decode(),
            decoder=orjson.loads,
            schema="pg_catalog",
        )


async def _keep(conn: asyncpg.Connection) -> None:
    """What a connection needs before going back to the pool: nothing. asyncpg's default reset
    (`pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`) is one more round trip per read,
    for session state these single autocommit SELECTs never create."""


class HotReads:
    """A small asyncpg pool and the statements it runs; `timed(name, started)` records each read
    under its name, like every named transaction (lorebase_store.db.Database). With `standbys`,
    a read that allows it runs on a standby's pool instead (lorebase_store.standbys)."""

    def __init__(
        self,
        url: str,
        *,
        size: int,
        statement_timeout_s: float,
        timed: Callable[[str, float], None],
    ) -> None:
        self._dsn = "postgresql://" + async_url(url).removeprefix("postgresql+asyncpg://")
        self._size = max(1, size)
        self._settings = {
            "statement_timeout": str(int(statement_timeout_s * 1000)),
            "application_name": "lorebase",
        }
        self._timed = timed
        self._pool: asyncpg.Pool | None = None
        self._opening: asyncio.Lock | None = None
        self.standbys: Standbys | None = None

    @property
    def host(self) -> str:
        """The server's address, for logs (no credentials)."""
        return self._dsn.rpartition("@")[2].partition("/")[0]

    async def _open(self) -> asyncpg.Pool:
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=1,
                    max_size=self._size,
                    server_settings=self._settings,
                    init=_json_codecs,
                    reset=_keep,
                )
        return self._pool

    def usage(self) -> tuple[int, int]:
        """(connections in use, most it opens)."""
        if self._pool is None:
            return 0, self._size
        return self._pool.get_size() - self._pool.get_idle_size(), self._size

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    async def _fetchrow(self, name: str, sql: str, *args: Any) -> Any:
        if self.standbys is not None:
            standby = await self.standbys.choose()
            if standby is not None:
                try:
                    return await standby.hot._fetchrow(name, sql, *args)
                except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError):
                    self.standbys.failed(standby)
        started = time.perf_counter()
        async with unavailable_raised():
            pool = self._pool or await self._open()
            row = await pool.fetchrow(sql, *args)
        self._timed(name, started)
        return row

    async def fetchval(self, name: str, sql: str, *args: Any) -> Any:
        """One value of one statement on this server (never routed)."""
        started = time.perf_counter()
        async with unavailable_raised():
            pool = self._pool or await self._open()
            value = await pool.fetchval(sql, *args)
        self._timed(name, started)
        return value

    async def record_at_head(
        self, domain_id: int, branch: str, kind: str, key: str
    ) -> tuple[str | None, bool, RecordRow | None, BranchOrder | None]:
        """In one statement: (head Revision, whether the branch exists, the Record or None), as
        RecordsTxn.record_at_head answers it, and where the head stands on its branch."""
        row = await self._fetchrow("get_record_head", _RECORD_AT_HEAD, domain_id, branch, kind, key)
        if row is None:
            return None, False, None, None
        order = BranchOrder(row["created_at"], row["generation"])
        if row["key"] is None:
            return row["head"], True, None, order
        record = RecordRow(
            row["kind"],
            row["key"],
            row["values"],
            row["provenance"],
            row["created_revision"],
            row["updated_revision"],
        )
        return row["head"], True, record, order

    async def branch_head(self, domain_id: int, branch: str) -> tuple[bool, str | None]:
        """(whether the branch exists, its head Revision) now: what a cached read is checked against."""
        row = await self._fetchrow("branch_head", _BRANCH_HEAD, domain_id, branch)
        return (False, None) if row is None else (True, row["head"])


__all__ = ["BranchOrder", "HotReads"]
