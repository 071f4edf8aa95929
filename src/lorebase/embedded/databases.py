"""Databases on a PostgreSQL server: their URLs, creating and dropping them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from lorebase.embedded._process import EmbeddedServerError

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def database_url(server_url: str, name: str) -> str:
    """`server_url` (a postgresql:// URL of any database on the server) naming database `name`."""
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _identifier(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a plain database name: {name!r}")
    return f'"{name}"'


async def create_database(
    server_url: str, name: str, *, template: str | None = None, exist_ok: bool = False
) -> str:
    """Create database `name` on the server (a copy of `template` when given); its URL."""
    import asyncpg

    statement = f"CREATE DATABASE {_identifier(name)}"
    if template is not None:
        statement += f" TEMPLATE {_identifier(template)}"
    conn = await asyncpg.connect(server_url)
    try:
        exists = await conn.fetchval("select 1 from pg_database where datname = $1", name)
        if exists and not exist_ok:
            raise EmbeddedServerError(f"database {name!r} exists already")
        if not exists:
            await conn.execute(statement)
    finally:
        await conn.close()
    return database_url(server_url, name)


async def drop_database(server_url: str, name: str) -> None:
    """Drop database `name` if it exists, closing the connections that still use it."""
    import asyncpg

    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {_identifier(name)} WITH (FORCE)")
    finally:
        await conn.close()
