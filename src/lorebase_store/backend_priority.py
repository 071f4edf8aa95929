"""The CPU priority of a PostgreSQL backend doing background work (issue 30).

Where PostgreSQL runs on this machine and the operating system lets this process (root, or the
user the server runs as), work that nobody waits on at once (a schema change set's migration and
the statements of its commit, the ANALYZE and the merge of pending index entries after it) lowers
the CPU priority of the backends serving it (`setpriority` on `pg_backend_pid()`), so the kernel
gives the cores to the backends serving reads and writes first. A backend is never given its
priority back (raising a priority takes a privilege this process may not have): a connection whose
backend was lowered is dropped from the pool when its transaction ends (`discard_lowered`), and its
backend exits with it. Best effort: a server elsewhere, or a refusal (said once in the log), leaves
the priority as it was.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

logger = logging.getLogger("lorebase.store")

LOWERED = "lorebase.lowered"  # in a connection's `info` once its backend's priority was lowered
_LOCAL_HOSTS = {"", "localhost", "127.0.0.1", "::1"}
_told_not_allowed = False


def local(url: str) -> bool:
    """Whether the database URL names a server on this machine (a loopback host or a socket)."""
    parts = urlsplit(url)
    hosts = parse_qs(parts.query).get("host", [])
    return (parts.hostname or "") in _LOCAL_HOSTS or any(h.startswith("/") for h in hosts)


def renice(pid: int, nice: int) -> bool:
    """`setpriority` on a PostgreSQL backend of this machine to `nice` (never raising its priority),
    when it is one (its /proc entry says postgres) and the system allows it: whether it was."""
    global _told_not_allowed
    try:
        if "postgres" not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            return False
        current = os.getpriority(os.PRIO_PROCESS, pid)
        os.setpriority(os.PRIO_PROCESS, pid, max(current, nice))
        return True
    except OSError as error:
        if not _told_not_allowed:
            _told_not_allowed = True
            logger.info("the PostgreSQL backend %d keeps its CPU priority (%s)", pid, error.strerror)
        return False


async def lower(conn: AsyncConnection, nice: int) -> None:
    """The backend serving `conn` at niceness `nice` (0: left as it is), once per connection; the
    connection is then dropped when its transaction ends (`discard_lowered`)."""
    if not nice or conn.info.get(LOWERED) or not local(conn.engine.url.render_as_string(hide_password=True)):
        return
    if renice(int(await conn.scalar(text("SELECT pg_backend_pid()"))), nice):
        conn.info[LOWERED] = True


async def discard_lowered(conn: AsyncConnection) -> None:
    """Drop `conn` from the pool if its backend's priority was lowered (after its transaction)."""
    if not conn.invalidated and conn.info.get(LOWERED):
        await conn.invalidate()


__all__ = ["discard_lowered", "local", "lower", "renice"]
