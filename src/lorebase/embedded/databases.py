"""Databases on a PostgreSQL server: their URLs, creating and dropping them, and the application
database of `lorebase up` (owned by a role that is not a superuser).

The services connect as the application role: it owns its database and everything in it (so that
it can migrate it), and nothing else; it cannot create roles or databases, read other databases or
run programs on the server as a superuser could. The extensions the migrations need are created by
the superuser beforehand: pgvector is not a trusted extension, so a database owner cannot create it
(the migrations' `CREATE EXTENSION IF NOT EXISTS` then finds it and needs no privilege).
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

from lorebase.embedded._process import EmbeddedServerError

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# Created by the superuser in the application database before it is migrated.
EXTENSIONS = ("pg_trgm", "vector")


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
    """Create database `name` on the server (a copy of `template` when given); its URL. A copy is
    made file by file (STRATEGY FILE_COPY: a checkpoint, then the files) rather than block by block
    through the WAL (PostgreSQL's default since 15), which costs 4x as long for the small migrated
    templates the tests clone once per test."""
    import asyncpg

    statement = f"CREATE DATABASE {_identifier(name)}"
    if template is not None:
        statement += f" TEMPLATE {_identifier(template)} STRATEGY FILE_COPY"
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


def _hand_over(role: str) -> str:
    """A DO block giving `role` what is in schema public of the database and not an extension's: the
    tables, views and sequences (those of a column follow their table), routines and types of a
    database migrated by the superuser before the application role existed."""
    return f"""
DO $$
DECLARE item record;
BEGIN
  FOR item IN
    SELECT format('ALTER %s %s OWNER TO {_identifier(role)}', CASE c.relkind
             WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE'
             WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, c.oid::regclass) AS statement
      FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
       AND c.relowner <> '{role}'::regrole
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                        AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
    UNION ALL
    SELECT format('ALTER ROUTINE %s OWNER TO {_identifier(role)}', p.oid::regprocedure)
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.proowner <> '{role}'::regrole
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                        AND d.objid = p.oid AND d.deptype = 'e')
    UNION ALL
    SELECT format('ALTER TYPE %s OWNER TO {_identifier(role)}', t.oid::regtype)
      FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typowner <> '{role}'::regrole
       AND t.typtype IN ('e', 'd', 'r') AND t.typelem = 0
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass
                        AND d.objid = t.oid AND d.deptype = 'e')
  LOOP
    EXECUTE item.statement;
  END LOOP;
END
$$"""


def role_url(server_url: str, role: str, password: str, database: str) -> str:
    """`server_url` with `role` and `password` as its credentials, naming database `database`."""
    parts = urlsplit(database_url(server_url, database))
    host = parts.hostname or "127.0.0.1"
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{f'[{host}]' if ':' in host else host}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


async def prepare_app_database(server_url: str, name: str, *, role: str, password: str) -> str:
    """Make `role` (login with `password`, no other privilege) the owner of database `name` and of all
    in it, creating what is missing, and create EXTENSIONS in it; the URL the services use."""
    import asyncpg

    _identifier(name)
    conn = await asyncpg.connect(server_url)
    try:
        exists = await conn.fetchval("select 1 from pg_roles where rolname = $1", role)
        verb = "ALTER" if exists else "CREATE"
        # The password is URL-safe (lorebase.embedded.credentials); DDL takes no parameters.
        if "'" in password:
            raise ValueError("the application role's password must not hold a quote")
        await conn.execute(
            f"{verb} ROLE {_identifier(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
            f"NOBYPASSRLS PASSWORD '{password}'"
        )
        owner = await conn.fetchval(
            "select pg_get_userbyid(datdba) from pg_database where datname = $1", name
        )
        if owner is None:
            await conn.execute(f"CREATE DATABASE {_identifier(name)} OWNER {_identifier(role)}")
        elif owner != role:
            await conn.execute(f"ALTER DATABASE {_identifier(name)} OWNER TO {_identifier(role)}")
    finally:
        await conn.close()
    conn = await asyncpg.connect(database_url(server_url, name))
    try:
        for extension in EXTENSIONS:
            await conn.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
        await conn.execute(_hand_over(role))
    finally:
        await conn.close()
    return role_url(server_url, role, password, name)


async def drop_database(server_url: str, name: str) -> None:
    """Drop database `name` if it exists, closing the connections that still use it."""
    import asyncpg

    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {_identifier(name)} WITH (FORCE)")
    finally:
        await conn.close()
