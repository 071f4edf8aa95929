"""Every use of asyncpg's and SQLAlchemy's asyncpg adapter's private names, in one place.

The commit path sends statements straight to the asyncpg connection under SQLAlchemy (TxnBase.driver)
and begins transactions itself, in BEGIN's own round trip with its `SET LOCAL` settings; the pool
forgets a BEGIN that never finished. Both need names that neither library publishes:

- asyncpg: `Connection._top_xact` (the transaction it believes open) and `Transaction._state`;
- SQLAlchemy's asyncpg adapter: `AsyncAdapt_asyncpg_connection._transaction`, `._start_transaction()`
  and `._connection`, and the pool's `_invalidate`.

pyproject.toml pins both libraries below their next minor version (asyncpg <0.33, SQLAlchemy <2.2),
and tests/unit/test_library_internals.py checks that each name is still there, so an upgrade that
moves one fails a test instead of a commit.
"""

from __future__ import annotations

from typing import Any

from asyncpg.transaction import TransactionState


def adapter_in_transaction(adapted: Any) -> bool:
    """Whether SQLAlchemy's adapter holds a transaction on this connection."""
    return adapted._transaction is not None


async def start_adapter_transaction(adapted: Any) -> None:
    """BEGIN as the adapter sends it lazily with its first statement."""
    await adapted._start_transaction()


def driver_marked_in_transaction(driver: Any) -> bool:
    """Whether asyncpg marks the connection as in a transaction (its `_top_xact`)."""
    return driver._top_xact is not None


async def begin_with(adapted: Any, driver: Any, settings: str) -> None:
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


def unstarted_begin(dbapi_connection: Any) -> Any:
    """The asyncpg connection under an adapted one when the adapter holds no transaction but asyncpg
    marks one (a BEGIN that never finished) or the server holds one (a statement cancelled past its
    BEGIN), else None."""
    driver = dbapi_connection._connection
    if dbapi_connection._transaction is not None:
        return None
    if driver._top_xact is None and not driver.is_in_transaction():
        return None
    return driver


def forget_transaction_mark(driver: Any) -> None:
    """Drop asyncpg's mark of an open transaction."""
    driver._top_xact = None


def invalidate_pooled(pool: Any, raw: Any, exc: BaseException) -> None:
    """Invalidate `raw` and every pooled connection made before it, as SQLAlchemy does on a
    disconnect it saw itself."""
    pool._invalidate(raw, exc)


__all__ = [
    "adapter_in_transaction",
    "begin_with",
    "driver_marked_in_transaction",
    "forget_transaction_mark",
    "invalidate_pooled",
    "start_adapter_transaction",
    "unstarted_begin",
]
