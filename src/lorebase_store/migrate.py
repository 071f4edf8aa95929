"""Schema migrations: numbered, append-only (migrations/versions), run by `lorebase migrate`,
`lorebase up` and the test fixtures. A service refuses a database migrated past what it knows."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

_HERE = Path(__file__).resolve().parent


class DatabaseTooNew(RuntimeError):
    """The database was migrated by a newer Lorebase than this one."""


def async_url(url: str) -> str:
    """The SQLAlchemy URL for asyncpg of a plain postgresql:// URL."""
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    raise ValueError(f"not a PostgreSQL URL: {url!r}")


# libpq's TLS parameters (`?sslmode=verify-full&sslrootcert=/etc/ca.crt`). SQLAlchemy hands every
# URL query parameter to asyncpg.connect() as a keyword, and asyncpg takes none of these as keywords
# (a TypeError at the first connection): it reads them from a DSN, with libpq's meanings and
# defaults (sslrootcert falls back to PGSSLROOTCERT, then ~/.postgresql/root.crt).
LIBPQ_TLS_PARAMETERS = frozenset(
    {
        "sslmode",
        "sslrootcert",
        "sslcert",
        "sslkey",
        "sslcrl",
        "sslpassword",
        "sslnegotiation",
        "ssl_min_protocol_version",
        "ssl_max_protocol_version",
    }
)


def _hosts_as_query(parts: SplitResult) -> tuple[SplitResult, list[tuple[str, str]]]:
    """libpq's several hosts (`user:pw@h1:5432,h2:5433`) as SQLAlchemy's asyncpg dialect takes
    them: no host in the netloc, one `host=h:port` query parameter each (every port written, 5432
    when the URL leaves it out). asyncpg tries them in order, keeping `target_session_attrs`."""
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if "," not in hosts:
        return parts, []
    listed = []
    for host in hosts.split(","):
        name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        listed.append(("host", f"{name}:{port}" if colon and port else f"{host}:5432"))
    return parts._replace(netloc=f"{userinfo}{at}"), listed


def engine_target(url: str) -> tuple[str, dict[str, Any]]:
    """The SQLAlchemy URL and the asyncpg connect arguments for a PostgreSQL URL: its libpq TLS
    parameters go to asyncpg in a DSN of their own (asyncpg parses them as libpq does), several
    hosts become SQLAlchemy's `host=` parameters, the rest of the URL goes to SQLAlchemy as before."""
    parts, hosts = _hosts_as_query(urlsplit(async_url(url)))
    query = hosts + parse_qsl(parts.query, keep_blank_values=True)
    tls = [(name, value) for name, value in query if name in LIBPQ_TLS_PARAMETERS]
    if not tls:
        return (urlunsplit(parts._replace(query=urlencode(query, safe=":"))) if hosts else async_url(url)), {}
    rest = [(name, value) for name, value in query if name not in LIBPQ_TLS_PARAMETERS]
    return urlunsplit(parts._replace(query=urlencode(rest, safe=":"))), {
        "dsn": "postgresql://?" + urlencode(tls)
    }


def _config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_HERE / "migrations"))
    config.set_main_option("sqlalchemy.url", async_url(url).replace("%", "%%"))
    return config


def known_revisions() -> set[str]:
    script = ScriptDirectory.from_config(_config("postgresql://x/y"))
    return {rev.revision for rev in script.walk_revisions()}


def head_revision() -> str:
    script = ScriptDirectory.from_config(_config("postgresql://x/y"))
    head = script.get_current_head()
    assert head is not None
    return head


def upgrade(url: str) -> None:
    """Migrate the database at `url` to the newest schema this Lorebase knows."""
    command.upgrade(_config(url), "head")


def check_version(current: str | None) -> None:
    """Raise DatabaseTooNew when `current` (alembic_version of the database) is unknown here."""
    if current is not None and current not in known_revisions():
        raise DatabaseTooNew(
            f"the database is at schema revision {current!r}, newer than this Lorebase knows "
            f"(newest known: {head_revision()!r}); upgrade Lorebase before starting it"
        )


__all__ = [
    "LIBPQ_TLS_PARAMETERS",
    "DatabaseTooNew",
    "async_url",
    "check_version",
    "engine_target",
    "head_revision",
    "known_revisions",
    "upgrade",
]
