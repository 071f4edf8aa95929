"""The base of the store's transaction objects: each table family adds its methods as a mixin.

A `Txn` wraps one connection inside one transaction (run through Database.run_interaction); the
logic above calls its typed methods and never sees the connection.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from lorebase_store import backend_priority
from lorebase_store.asyncpg_internals import (
    adapter_in_transaction,
    begin_with,
    driver_marked_in_transaction,
    start_adapter_transaction,
)


class TxnBase:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        # The outbox fence's xid is held and the relay's wake-up queued (lorebase_store.commits).
        self.outbox_xid_held = False
        self._raw: Any = None  # the pooled DBAPI connection under `conn` (fixed while it is open)

    async def driver(self, *, settings: str = "") -> Any:
        """The asyncpg connection under this transaction, for the statements of the commit path:
        SQLAlchemy's adapter (execution context, greenlet hop, result proxy) costs more CPU than the
        statement there. Statements sent on it take `$n` parameters, run in the same transaction,
        and are prepared once per connection (asyncpg's statement cache); jsonb parameters are
        JSON text and jsonb results come back decoded (the engine's codecs, lorebase_store.db).

        `settings`: `SET LOCAL` statements for this transaction, sent in BEGIN's own round trip
        when this call begins the transaction (in a round trip of their own otherwise)."""
        raw = self._raw
        if raw is None:  # asking SQLAlchemy for it costs a greenlet hop: once per Txn
            raw = self._raw = await self.conn.get_raw_connection()
        adapted: Any = raw.dbapi_connection
        driver = raw.driver_connection
        # SQLAlchemy's adapter sends BEGIN lazily, with its first statement: when the first statement
        # of a transaction goes straight to the driver, begin it here, as the adapter would.
        if not adapter_in_transaction(adapted) and adapted.isolation_level != "autocommit":
            if settings and not driver_marked_in_transaction(driver) and not driver.is_in_transaction():
                await begin_with(adapted, driver, settings)
                return driver
            await start_adapter_transaction(adapted)
        if settings:
            await driver.execute(settings)
        return driver

    async def repeatable_read(self) -> None:
        """Make this (writing) transaction read one snapshot; call it before any other statement."""
        await self.conn.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))

    async def bulk(self, seconds: float) -> None:
        """Make this transaction fit for bulk work: `seconds` per statement (database.statement_timeout_s
        otherwise), and plans made for the actual parameters. A cached generic plan does not know the
        size of an array parameter: with tens of thousands of keys it may filter every row of a
        table through an unhashed `= ANY(...)`, which takes minutes instead of milliseconds."""
        await self.conn.execute(text(f"SET LOCAL statement_timeout = {int(seconds * 1000)}"))
        await self.conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))

    async def lower_priority(self, nice: int) -> None:
        """Lower the CPU priority of the backend serving this transaction to niceness `nice` (work
        nobody waits on at once: lorebase_store.backend_priority); its connection leaves the pool at
        the transaction's end."""
        await backend_priority.lower(self.conn, nice)


__all__ = ["TxnBase"]
