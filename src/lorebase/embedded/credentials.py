"""Credentials kept in the data directory: generated on the first start, read back on every other.

`lorebase up` runs its embedded servers with credentials so that a local process that can reach
their loopback ports (any user of the machine) cannot read or forge anything: the PostgreSQL
superuser's and application role's passwords, the NATS token, the webhook encryption key and the
admin key each live in a file of their own in the data directory, mode 0600, created with O_EXCL so
that two starts racing on one directory cannot each write a different value. A value that exists is
never replaced (the servers and the sealed webhook keys depend on it); a file whose mode lets others
read it is narrowed to 0600. Values are URL-safe (`secrets.token_urlsafe`), so they go into URLs,
configuration files and SQL string literals without quoting.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from lorebase.embedded._process import EmbeddedServerError

# Files of the data directory (docs/running.md, "Files in the data directory").
ADMIN_KEY_FILE = "admin.key"
POSTGRES_SUPERUSER_FILE = "postgres-superuser.password"
POSTGRES_APP_FILE = "postgres-lorebase.password"
NATS_TOKEN_FILE = "nats.token"
WEBHOOK_KEY_FILE = "webhook.key"


def kept_secret(path: Path, *, prefix: str = "", nbytes: int = 32) -> tuple[str, bool]:
    """The value in `path`, or a new `prefix` + random one written there (0600); and whether it is new."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(0o600)
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value, False
        raise EmbeddedServerError(f"{path} is empty; delete it to have a new value generated") from None
    value = prefix + secrets.token_urlsafe(nbytes)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    return value, True


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (created or replaced) readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


__all__ = [
    "ADMIN_KEY_FILE",
    "NATS_TOKEN_FILE",
    "POSTGRES_APP_FILE",
    "POSTGRES_SUPERUSER_FILE",
    "WEBHOOK_KEY_FILE",
    "kept_secret",
    "write_private",
]
