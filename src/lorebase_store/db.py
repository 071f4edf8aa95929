"""The database handle: one AsyncEngine per process and one way to run a transaction.

Every transaction is a named function run through `Database.run_interaction(name, fn, ...)`
(after Synapse's runInteraction): one place for retries on serialization failures and deadlocks,
timing and logging per name. With standbys (`database.standby_urls`), `read`, `read_one` and the
hot reads run on a standby when the read allows it (lorebase_store.standbys), and on the primary
otherwise or when the standby fails; writes always run on the primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import asyncpg
import orjson
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import await_

from lorebase_store.asyncpg_internals import forget_transaction_mark, invalidate_pooled, unstarted_begin
from lorebase_store.backend_priority import discard_lowered, lower
from lorebase_store.hot import BranchOrder, HotReads
from lorebase_store.migrate import check_version, engine_target
from lorebase_store.records import RecordRow
from lorebase_store.standbys import Standby, Standbys
from lorebase_store.store import Txn
from lorebase_store.unavailable import unavailable_raised

logger = logging.getLogger("lorebase.store")

P = ParamSpec("P")
R = TypeVar("R")

_RETRYABLE = {"40001", "40P01"}  # serialization_failure, deadlock_detected
_MAX_ATTEMPTS = 5
# A read on a standby that fails with these runs again on the primary: cancelled by a conflict with
# recovery (40001), the standby shutting down or gone (57P01-57P03, 08xxx).
_STANDBY_RETRY = {"40001", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"}


def _engine(
    url: str, pool_size: int, statement_timeout_s: float, application_name: str = "lorebase"
) -> AsyncEngine:
    target, tls = engine_target(url)
    engine = create_async_engine(
        target,
        json_serializer=lambda value: orjson.dumps(value).decode(),
        json_deserializer=orjson.loads,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=False,
        connect_args={
            **tls,
            "server_settings": {
                "statement_timeout": str(int(statement_timeout_s * 1000)),
                "application_name": application_name,
            },
        },
    )
    event.listen(engine.sync_engine.pool, "checkout", _forget_unstarted_begin)
    return engine


def _sqlstate(exc: DBAPIError | asyncpg.PostgresError) -> str | None:
    if isinstance(exc, asyncpg.PostgresError):
        return str(exc.sqlstate)
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) or getattr(getattr(orig, "__cause__", None), "sqlstate", None)


class Database:
    """An AsyncEngine with named, retried transactions."""

    def __init__(self, engine: AsyncEngine, *, hot: HotReads | None = None, max_connections: int = 0) -> None:
        self.engine = engine
        self.max_connections = max_connections  # of the engine's pool (pool_size + max_overflow)
        self.timings: dict[str, list[float]] = {}
        # The hottest single-statement reads, on raw asyncpg (lorebase_store.hot); None: a Database
        # made from a bare engine has none, and its callers read through SQLAlchemy.
        self.hot = hot
        self.standbys: Standbys | None = None

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        pool_size: int = 10,
        statement_timeout_s: float = 30,
        standby_urls: tuple[str, ...] | list[str] = (),
        standby_wait_s: float = 0.05,
        standby_max_lag_s: float = 5.0,
        application_name: str = "lorebase",
    ) -> Database:
        """`application_name`: what PostgreSQL shows for its engine's sessions (pg_stat_activity);
        a schema change's migration process names its own (lorebase_keeper schema_changes/process.py)."""
        database = cls(
            _engine(url, pool_size, statement_timeout_s, application_name), max_connections=2 * pool_size
        )
        database.hot = database._hot_reads(url, pool_size, statement_timeout_s)
        if standby_urls:
            standbys = [
                Standby(
                    standby,
                    _engine(standby, pool_size, statement_timeout_s),
                    database._hot_reads(standby, pool_size, statement_timeout_s),
                )
                for standby in standby_urls
            ]
            hot = database.hot
            database.standbys = Standbys(
                standbys,
                lambda: hot.fetchval("primary_position", "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"),
                wait_s=standby_wait_s,
                max_lag_s=standby_max_lag_s,
            )
            hot.standbys = database.standbys
        return database

    def _hot_reads(self, url: str, pool_size: int, statement_timeout_s: float) -> HotReads:
        return HotReads(
            url, size=max(2, pool_size // 2), statement_timeout_s=statement_timeout_s, timed=self._record
        )

    def pool_usage(self) -> list[tuple[str, int, int]]:
        """(pool, connections in use, most it opens) of each pool: `engine` (SQLAlchemy's) and `hot`
        (the asyncpg pool of the hottest reads); the saturation metrics (lorebase.metrics_scraped)."""
        usage = [("engine", int(self.engine.sync_engine.pool.checkedout()), self.max_connections)]  # type: ignore[attr-defined]
        if self.hot is not None:
            usage.append(("hot", *self.hot.usage()))
        return usage

    async def close(self) -> None:
        if self.standbys is not None:
            await self.standbys.close()
            for standby in self.standbys.standbys:
                await standby.hot.close()
                await standby.engine.dispose()
        if self.hot is not None:
            await self.hot.close()
        await self.engine.dispose()

    async def _routed(self, run: Callable[[AsyncEngine], Awaitable[R]]) -> R:
        """`run` with a standby's engine when the read being served allows it (lorebase_store.standbys),
        else with the primary's; on the primary too when the standby fails it (set aside meanwhile)."""
        standby = None if self.standbys is None else await self.standbys.choose()
        if standby is None:
            return await run(self.engine)
        try:
            return await run(standby.engine)
        except (DBAPIError, asyncpg.PostgresError, OSError) as exc:
            gone = isinstance(exc, OSError) or (isinstance(exc, DBAPIError) and exc.connection_invalidated)
            if not gone and _sqlstate(exc) not in _STANDBY_RETRY:
                raise
            assert self.standbys is not None
            self.standbys.failed(standby)
            return await run(self.engine)

    async def analyze(
        self, tables: tuple[str, ...], *, statement_timeout_s: float = 600, nice: int = 0
    ) -> None:
        """Refresh the planner's statistics of these tables (ANALYZE samples them), one transaction per
        table: ANALYZE writes, so each one holds the outbox fence only while it runs. `nice`: its
        backend's CPU priority lowered (lorebase_store.backend_priority)."""
        for table in tables:
            await self._background(f"ANALYZE {table}", {}, statement_timeout_s, nice)

    async def merge_pending(
        self, indexes: tuple[str, ...], *, statement_timeout_s: float = 600, nice: int = 0
    ) -> None:
        """Merge the pending entries of these GIN indexes into them (`gin_pending_list_limit`: a large
        import leaves them pending, bulk.py), one transaction per index; `nice` as for `analyze`."""
        for index in indexes:
            await self._background(
                "SELECT gin_clean_pending_list(CAST(:index AS regclass))",
                {"index": index},
                statement_timeout_s,
                nice,
            )

    async def _background(
        self, statement: str, parameters: dict[str, Any], timeout_s: float, nice: int
    ) -> None:
        """One maintenance statement in a transaction of its own, at niceness `nice`."""
        async with self.engine.connect() as conn:
            try:
                async with conn.begin():
                    await lower(conn, nice)
                    await conn.execute(text(f"SET LOCAL statement_timeout = {int(timeout_s * 1000)}"))
                    await conn.execute(text(statement), parameters)
            finally:
                await discard_lowered(conn)

    @contextlib.asynccontextmanager
    async def lease(self, name: str) -> AsyncIterator[bool]:
        """Whether this process holds the lease `name` (a session-level advisory lock on a pooled
        connection of its own, keyed `hashtextextended(name, 0)`) for the block: one holder at a
        time across processes, and a holder that dies or loses its connection lets the next one in
        at once (a lost connection is no error at the block's end: the lock went with it). A
        staging's liveness mark is one (lorebase_store.staged_rows)."""
        async with self.engine.connect() as conn:
            key = await conn.scalar(text("SELECT hashtextextended(:name, 0)"), {"name": name})
            held = bool(await conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}))
            await conn.commit()
            try:
                yield held
            finally:
                if held:
                    try:
                        await conn.scalar(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                        await conn.commit()
                    except DBAPIError as exc:
                        if not exc.connection_invalidated:
                            raise

    async def check_schema(self) -> None:
        """Refuse a database migrated past what this code knows (or not migrated at all)."""
        async with self.engine.connect() as conn:
            exists = await conn.scalar(text("select to_regclass('alembic_version') is not null"))
            current = await conn.scalar(text("select version_num from alembic_version")) if exists else None
        if current is None:
            raise RuntimeError("the database is not migrated: run `lorebase migrate` first")
        check_version(current)

    async def run_interaction(
        self,
        name: str,
        fn: Callable[Concatenate[Txn, P], Awaitable[R]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Run `fn(txn, *args, **kwargs)` in one transaction, retrying serialization failures."""
        for attempt in range(1, _MAX_ATTEMPTS + 1):
            started = time.perf_counter()
            try:
                async with unavailable_raised(), self.engine.connect() as conn:
                    try:
                        async with conn.begin():
                            result = await _run(conn, fn, *args, **kwargs)
                    finally:  # a backend whose priority the work lowered (Txn.lower_priority) goes
                        await discard_lowered(conn)
                self._record(name, started)
                return result
            except (DBAPIError, asyncpg.PostgresError) as exc:  # the driver's own: TxnBase.driver
                if _sqlstate(exc) in _RETRYABLE and attempt < _MAX_ATTEMPTS:
                    logger.info("transaction %s: retry %d after %s", name, attempt, _sqlstate(exc))
                    await asyncio.sleep(0.005 * attempt)
                    continue
                raise
        raise AssertionError("unreachable")

    async def read(
        self,
        name: str,
        fn: Callable[Concatenate[Txn, P], Awaitable[R]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Run a read-only function in a REPEATABLE READ snapshot: its statements agree with each other."""
        started = time.perf_counter()

        async def run(engine: AsyncEngine) -> R:
            async with engine.connect() as conn:
                conn = await conn.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
                try:
                    result = await _run(conn, fn, *args, **kwargs)
                    await conn.rollback()
                finally:
                    await discard_lowered(conn)
            return result

        async with unavailable_raised():  # outside the routing, which falls back from a standby itself
            result = await self._routed(run)
        self._record(name, started)
        return result

    async def rolled_back(
        self,
        name: str,
        fn: Callable[Concatenate[Txn, P], Awaitable[R]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Run a function in a read-write transaction that is then rolled back (it leaves nothing)."""
        started = time.perf_counter()
        async with unavailable_raised(), self.engine.connect() as conn:
            await conn.begin()
            result = await _run(conn, fn, *args, **kwargs)
            await conn.rollback()
        self._record(name, started)
        return result

    async def record_at_head(
        self, domain_id: int, branch: str, kind: str, key: str
    ) -> tuple[str | None, bool, RecordRow | None, BranchOrder | None]:
        """The hottest read, in one statement: (head Revision, whether the branch exists, the Record
        or None, where the head stands on its branch). On the raw asyncpg pool of `hot` when this
        Database has one (a standby when the read allows it), else through SQLAlchemy, which does not
        tell where the head stands (None). Callers ask here and never choose the driver."""
        if self.hot is not None:
            return await self.hot.record_at_head(domain_id, branch, kind, key)
        head, exists, row = await self.read_one(
            "get_record_head", lambda txn: txn.record_at_head(domain_id, branch, kind, key)
        )
        return head, exists, row, None

    async def branch_head(self, domain_id: int, branch: str) -> tuple[bool, str | None]:
        """(whether the branch exists, its head Revision) now, in one statement: what a cached read is
        checked against (on `hot` when there is one, as `record_at_head`)."""
        if self.hot is not None:
            return await self.hot.branch_head(domain_id, branch)
        row = await self.read_one("branch_head", lambda txn: txn.get_branch(domain_id, branch))
        return (False, None) if row is None else (True, row.head)

    async def read_one(
        self,
        name: str,
        fn: Callable[Concatenate[Txn, P], Awaitable[R]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """Run a function that reads with ONE statement, outside a transaction (one round trip)."""
        started = time.perf_counter()

        async def run(engine: AsyncEngine) -> R:
            async with engine.connect() as conn:
                conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                return await _run(conn, fn, *args, **kwargs)

        async with unavailable_raised():  # outside the routing, which falls back from a standby itself
            result = await self._routed(run)
        self._record(name, started)
        return result

    def _record(self, name: str, started: float) -> None:
        elapsed = time.perf_counter() - started
        samples = self.timings.setdefault(name, [])
        if len(samples) < 1000:
            samples.append(elapsed)
        if elapsed > 1.0:
            logger.warning("transaction %s took %.3f s", name, elapsed)


async def _run(conn: AsyncConnection, fn: Callable[..., Awaitable[R]], *args: Any, **kwargs: Any) -> R:
    """`fn(Txn(conn), ...)`, dropping the connection when a statement found it closed.

    A statement sent straight to the driver (TxnBase.driver) raises past SQLAlchemy, which then
    never sees the disconnect and would hand the dead connection (and the others of the pool,
    after a server restart) out again. Do what SQLAlchemy does on a disconnect: invalidate this
    connection and every pooled connection made before it (they reconnect on their next checkout)."""
    try:
        return await fn(Txn(conn), *args, **kwargs)
    except Exception as exc:
        if not conn.invalidated:
            raw = await conn.get_raw_connection()
            if raw.driver_connection is None or raw.driver_connection.is_closed():
                invalidate_pooled(conn.sync_engine.pool, raw, exc)
                await conn.invalidate(exc)
        raise


def _forget_unstarted_begin(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """On checkout: forget a transaction whose BEGIN never finished on this connection.

    asyncpg's `Transaction.start` marks the connection as in a transaction before it
    sends BEGIN, and leaves the mark when BEGIN fails or the task awaiting it is cancelled (a client
    that went away mid-request); SQLAlchemy's adapter then holds no transaction to end, so the mark
    outlives the checkout, and every later transaction on the connection is taken for a nested one
    (a SAVEPOINT, or an error when the isolation levels differ). End the server's transaction if
    the BEGIN ran, and drop the mark. A connection the server holds in a transaction that neither
    asyncpg nor the adapter knows of (a statement cancelled past its BEGIN) is rolled back too:
    asyncpg would refuse every later transaction on it ("a manually started transaction")."""
    driver = unstarted_begin(dbapi_connection)
    if driver is None:
        return
    if driver.is_in_transaction():
        await_(driver.execute("ROLLBACK"))
    forget_transaction_mark(driver)


def row_dict(row: Any) -> dict[str, Any]:
    return dict(row._mapping)


__all__ = ["Database", "row_dict"]
