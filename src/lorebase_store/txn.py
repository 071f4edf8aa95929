"""The base of the store's transaction objects: each table family adds its methods as a mixin.

A `Txn` wraps one connection inside one transaction (run through Database.run_interaction); the
logic above calls its typed methods and never sees the connection.
"""

from __future__ import annotations

from typing import Any

from asyncpg.transaction import TransactionState
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


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
        if adapted._transaction is None and adapted.isolation_level != "autocommit":
            if settings and driver._top_xact is None and not driver.is_in_transaction():
                await _begin_with(adapted, driver, settings)
                return driver
            await adapted._start_transaction()
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


async def _begin_with(adapted: Any, driver: Any, settings: str) -> None:
    """What the adapter's `_start_transaction` does (asyncpg's `Transaction.start`), with `settings`
    in BEGIN's simple query: one round trip for both. The asyncpg transaction is then marked started
    and handed to the adapter, which commits or rolls it back as its own."""
    transaction = driver.transaction(
        isolation=adapted.isolation_level, readonly=adapted.readonly, deferrable=adapted.deferrable
    )
    begin = "BEGIN"
    if adapted.isolation_level:  # None: the server's default, as asyncpg's own BEGIN
        begin += " ISOLATION LEVEL " + adapted.isolation_level.replace("_", " ").upper()
    if adapted.readonly:
        begin += " READ ONLY"
    if adapted.deferrable:
        begin += " DEFERRABLE"
    driver._top_xact = transaction
    try:
        await driver.execute(f"{begin}; {settings}")
    except BaseException:
        driver._top_xact = None
        if driver.is_in_transaction():  # BEGIN ran, a setting failed: end what BEGIN started
            await driver.execute("ROLLBACK")
        raise
    transaction._state = TransactionState.STARTED
    adapted._transaction = transaction


__all__ = ["TxnBase"]
