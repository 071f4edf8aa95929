"""PostgreSQL that cannot be reached now (restarting, shutting down, a connection lost) told apart
from every other failure: the storage layer raises `StoreUnavailable` in place of the driver's error,
and every service answers it 503 with Retry-After (lorebase.grpc_problems), since the same call may
succeed shortly; any other error stays what it was (a 500)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg
from sqlalchemy.exc import DBAPIError

from lorebase.problems import StoreUnavailable

# SQLSTATEs of a server that is going away or not accepting connections yet: admin_shutdown,
# crash_shutdown, cannot_connect_now (a restart), and the class of connection exceptions.
_GOING_AWAY = frozenset({"57P01", "57P02", "57P03"})


@contextlib.asynccontextmanager
async def unavailable_raised() -> AsyncIterator[None]:
    """StoreUnavailable in place of an error that says PostgreSQL cannot be reached now."""
    try:
        yield
    except StoreUnavailable:
        raise
    except Exception as exc:
        if store_unavailable(exc):
            raise StoreUnavailable(f"PostgreSQL is unavailable: {type(exc).__name__}: {exc}") from exc
        raise


def store_unavailable(error: BaseException) -> bool:
    """Whether `error` says PostgreSQL cannot be reached now (restarting, shutting down, the
    connection lost): the call may succeed if tried again shortly, so it answers 503, not 500."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionError, asyncpg.exceptions.ConnectionDoesNotExistError)):
            return True
        if isinstance(current, OSError) and not isinstance(current, FileNotFoundError):
            return True
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        if isinstance(current, (DBAPIError, asyncpg.PostgresError)):
            state = _sqlstate(current) or ""
            if state in _GOING_AWAY or state.startswith("08"):
                return True
        if isinstance(current, asyncpg.exceptions.InterfaceError) and "closed" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _sqlstate(exc: DBAPIError | asyncpg.PostgresError) -> str | None:
    if isinstance(exc, asyncpg.PostgresError):
        return str(exc.sqlstate)
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) or getattr(getattr(orig, "__cause__", None), "sqlstate", None)


__all__ = ["store_unavailable", "unavailable_raised"]
