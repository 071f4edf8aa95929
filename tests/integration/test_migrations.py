"""Migrations: the template is at the newest revision, and a database newer than the code is refused."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from lorebase_store import Database, DatabaseTooNew
from lorebase_store.migrate import head_revision


async def test_database_is_at_head_and_newer_is_refused(database_url: str) -> None:
    db = Database.connect(database_url, pool_size=1)
    try:
        await db.check_schema()
        async with db.engine.begin() as conn:
            assert await conn.scalar(text("select version_num from alembic_version")) == head_revision()
            await conn.execute(text("update alembic_version set version_num = '9999_from_the_future'"))
        with pytest.raises(DatabaseTooNew, match="newer than this Lorebase knows"):
            await db.check_schema()
    finally:
        await db.close()
