"""Alembic environment: runs the numbered migrations over asyncpg."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

from lorebase_store.migrate import engine_target
from lorebase_store.tables import metadata

target_metadata = metadata


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


async def _main() -> None:
    target, tls = engine_target(context.config.get_main_option("sqlalchemy.url") or "")
    engine = create_async_engine(target, connect_args=tls)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


asyncio.run(_main())
