"""The base of the store's transaction objects: each table family adds its methods as a mixin.

A `Txn` wraps one connection inside one transaction (run through Database.run_interaction); the
logic above calls its typed methods and never sees the connection.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


class TxnBase:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def repeatable_read(self) -> None:
        """Make this (writing) transaction read one snapshot; call it before any other statement."""
        await self.conn.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))

    async def set_statement_timeout(self, seconds: float) -> None:
        """Allow this transaction's statements `seconds` each (database.statement_timeout_s otherwise)."""
        await self.conn.execute(text(f"SET LOCAL statement_timeout = {int(seconds * 1000)}"))


__all__ = ["TxnBase"]
