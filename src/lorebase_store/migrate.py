"""Schema migrations: numbered, append-only (migrations/versions), run by `lorebase migrate`,
`lorebase up` and the test fixtures. A service refuses a database migrated past what it knows."""

from __future__ import annotations

from pathlib import Path

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


__all__ = ["DatabaseTooNew", "async_url", "check_version", "head_revision", "known_revisions", "upgrade"]
