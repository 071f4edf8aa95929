"""The base of the store's transaction objects: each table family adds its methods as a mixin.

A `Txn` wraps one connection inside one transaction (run through Database.run_interaction); the
logic above calls its typed methods and never sees the connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection


class UniqueViolation(Exception):
    """An insert hit a unique constraint (the caller decides what that means)."""


class TxnBase:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """A nested transaction: an exception rolls back only what ran inside it."""
        nested = await self.conn.begin_nested()
        try:
            yield
        except IntegrityError as exc:
            await nested.rollback()
            raise UniqueViolation(str(exc.orig)) from exc
        except BaseException:
            await nested.rollback()
            raise
        else:
            await nested.commit()


__all__ = ["TxnBase", "UniqueViolation"]
