"""A change set's migration in a process of its own, at a lower CPU priority (issue 30).

Everything a change set does before its commit takes the branch's lock (migrate.py: read every
Record of the Kinds it changes, migrate and check them; staged/staging.py: plan and COPY the rows the commit
will write) runs in a child process that keeper starts for it, not on keeper's event loop. Keeper
serves its reads and writes meanwhile on a loop and a GIL of its own; the child runs at
`keeper.schema_changes.nice` (`os.nice`), so the kernel gives the cores to keeper, PostgreSQL and
the other services first; and when the child exits, the memory it took (about 3.3 GB at a million
Records) goes with it, as does the cyclic collector's walk over it. The store stays keeper's: the
child connects to the same database with its own two connections (its `application_name` the
staging id), reads its snapshot of the head and stages rows exactly as keeper did, and sends back
what the commit needs (`Staged.document`: counts, the changes digest, the unique values, the
violations; no Record). Keeper's loop only waits for it, then catches up and commits as before,
under the lock (change/on_branch.py). A synchronous change set, a job, a dry run and the first change set a
kept merge brings (catch_up.py, `staged_ahead`) all take this path. A merge attempt that is not
kept, and a kept merge's later change sets, do not: they stage inside the merge's own transaction,
which a process of its own cannot share.

The child comes from a fork server (multiprocessing's `forkserver`, started by keeper at its first
change set with these modules imported), so it starts in milliseconds, without a copy of keeper's
threads, loop or connections. Keeper and the child talk over a pipe: the child's log records (logged
by keeper under their own logger, so keeper's log reads as before), its progress after each batch
(keeper runs its listeners and the job's checks, then answers `go`: the migration waits for them, as
it did on keeper's loop), and last its answer (the staged migration, or a problem). A job stopped
meanwhile (its deadline, keeper stopping) or a call cancelled ends the child (SIGKILL); a child
whose keeper is gone ends itself at its next message or chunk of rows (its staging's mark went with
keeper: a keeper that starts clears its rows; one chunk sent meanwhile stays until the next start).

A child that ends without an answer (killed, out of memory) answers 409 schema-migration-moved with
`reason: migration-process`, nothing changed: keeper ends its database sessions
(`pg_terminate_backend`, waiting for each to go, so no chunk of rows commits later) and then its
staged rows are forgotten (change/apart.py).

Where PostgreSQL runs on this machine and the operating system lets keeper (root, or the same user
as the server), the child also lowers the CPU priority of its two PostgreSQL backends to the same
niceness (lorebase_store.backend_priority): best effort, said once in the log when not allowed.
Those backends hold no lock anyone waits on, only the rows they stage.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import orjson

from lorebase.event_loop import collection_paused
from lorebase.problems import Problem
from lorebase.schema.changes import apply_changes
from lorebase_keeper.schema_changes.migrate import SAMPLE
from lorebase_keeper.schema_changes.staged import Staged, Staging, stage
from lorebase_keeper.writes import Head, check_expected_head, open_view
from lorebase_store import Database, Txn

logger = logging.getLogger("lorebase.keeper.schema_changes")

_CONTEXT = multiprocessing.get_context("forkserver")
# The fork server imports this module (and so the migration's code) once; each child is a fork of it.
_CONTEXT.set_forkserver_preload([__name__])
_GO = b"go"

Told = Callable[[str, int, int], Awaitable[None]]


@dataclass(frozen=True)
class Apart:
    """What the child needs to stage a change set: the database, the branch, the schema the change
    set applies to and its items, how it treats invalid values, and the staging's settings
    (Staging: id, None for a dry run; batch, changed keys, samples kept, duty); `name` is its
    sessions' application_name (the staging id, or a name of its own for a dry run)."""

    database_url: str
    statement_timeout_s: float
    domain_id: int
    branch: str
    schema: dict[str, Any]
    items: list[dict[str, Any]]
    on_invalid: str
    expected_head: str | None
    staging: str | None
    name: str
    batch: int
    changed_keys_max: int
    keep: int = SAMPLE
    duty: float = 1.0
    nice: int = 0


async def stage_apart(apart: Apart, db: Database, told: Told) -> Staged:
    """The change set's migration staged by a child process (the module's docstring); `told` hears
    of each batch, and may raise to stop it (a job's stop)."""
    ours, theirs = _CONTEXT.Pipe()
    child = _CONTEXT.Process(target=_child, args=(theirs, apart), name=f"lorebase migration {apart.name}")
    await asyncio.to_thread(child.start)  # the first one starts the fork server
    theirs.close()
    logger.info(
        "schema change on %s: migrating in process %d (nice %d), outside the branch's lock",
        apart.branch,
        child.pid,
        apart.nice,
    )
    answered = False
    receiving: asyncio.Future[tuple[str, Any] | None] | None = None
    try:
        while True:
            receiving = asyncio.ensure_future(asyncio.to_thread(_receive, ours))
            message = await asyncio.shield(receiving)
            receiving = None
            if message is None:
                break
            what, content = message
            if what == "log":
                level, name, text = content
                logging.getLogger(name).log(level, "%s", text)
            elif what == "progress":
                await told(*content)
                try:
                    ours.send_bytes(_GO)
                except OSError:
                    break  # it ended meanwhile
            elif what == "staged":
                answered = True
                return Staged.of_document(content)
            elif what == "problem":
                answered = True
                raise Problem.from_document(content)
            else:
                answered = True
                raise RuntimeError(f"the migration process failed: {content}")
        await asyncio.to_thread(child.join)
        raise _ended(apart.branch, child.pid, child.exitcode)
    finally:
        if not answered and child.exitcode is None:
            child.kill()
        await asyncio.to_thread(child.join, 10)  # it exits once it answered
        if child.exitcode is None:
            child.kill()
            await asyncio.to_thread(child.join)
        if receiving is not None:  # a read of the pipe under way ends at its end (the child gone)
            await receiving
        ours.close()
        if not answered:  # ended midway: its sessions go before its staged rows are forgotten
            await db.run_interaction("schema_change_end_sessions", _end_sessions, apart.name)


def _receive(connection: Connection) -> tuple[str, Any] | None:
    try:
        what, content = orjson.loads(connection.recv_bytes())
    except (EOFError, OSError):  # the child ended (a reset when it left unread bytes behind)
        return None
    return what, content


def _ended(branch: str, pid: int | None, exitcode: int | None) -> Problem:
    if exitcode is not None and exitcode < 0:
        how = f"killed by signal {-exitcode} ({signal.Signals(-exitcode).name})"
    else:
        how = f"exit status {exitcode}"
    return Problem(
        409,
        "schema-migration-moved",
        f"the change set's migration process (pid {pid}) on branch {branch!r} ended without an "
        f"answer ({how}); nothing changed, send the change set again",
        branch=branch,
        reason="migration-process",
    )


async def _end_sessions(txn: Txn, name: str) -> None:
    await txn.end_sessions(name)


# The child.


def _child(connection: Connection, apart: Apart) -> None:
    """The child process's work: stage, send the answer, exit (without freeing what it held)."""
    if apart.nice:
        os.nice(apart.nice)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_Forward(connection))
    root.setLevel(logging.INFO)

    def keeper_here() -> None:
        if connection.poll():  # keeper sends nothing unasked: readable here is keeper gone
            os._exit(1)

    async def progress(kind: str, done: int, total: int) -> None:
        _send(connection, "progress", [kind, done, total])
        connection.recv_bytes()  # keeper's `go`: its listeners ran

    try:
        with collection_paused():  # its objects live until it exits: no collection walks them
            staged = asyncio.run(stage_here(apart, progress, keeper_here))
        _send(connection, "staged", staged.document())
    except Problem as problem:
        _send(connection, "problem", problem.document())
    except BaseException:
        _send(connection, "error", traceback.format_exc(limit=20))
    finally:
        connection.close()
        os._exit(0)  # a million Records freed one by one would only cost CPU


async def stage_here(apart: Apart, progress: Told, keeper_here: Callable[[], None]) -> Staged:
    """The migration staged in this process (the child's work): `progress` hears of each batch,
    `keeper_here` is asked before each chunk of rows (the child exits when keeper is gone)."""
    db = Database.connect(
        apart.database_url,
        pool_size=1,
        statement_timeout_s=apart.statement_timeout_s,
        application_name=apart.name,
    )

    async def renice(txn: Txn) -> None:
        """The backend serving `txn` at the child's niceness (best effort: lorebase_store.backend_priority)."""
        await txn.lower_priority(apart.nice)

    async def put(rows: list[tuple[Any, ...]]) -> None:
        keeper_here()

        async def stage_rows(txn: Txn) -> None:
            await renice(txn)
            await txn.stage_rows(apart.domain_id, apart.branch, rows)

        await db.run_interaction("schema_change_staged_rows", stage_rows)

    staging = Staging(
        apart.staging, put, apart.batch, progress, apart.changed_keys_max, apart.keep, apart.duty
    )
    plan = apply_changes(apart.schema, apart.items)

    async def read(txn: Txn) -> Staged:
        """The migration over a snapshot of the branch's head (Database.read: read-only, REPEATABLE READ)."""
        await renice(txn)
        row = await txn.get_branch(apart.domain_id, apart.branch)
        if row is None:
            raise Problem(404, "not-found", f"unknown branch {apart.branch!r}; GET /branches lists them")
        head = Head(row.head, row.generation, row.schema_digest)
        check_expected_head(apart.expected_head, apart.branch, head.revision)
        return await stage(await open_view(txn, row), head, plan, apart.on_invalid, staging)

    try:
        return await db.read("schema_change_stage", read)
    finally:
        await db.close()


def _send(connection: Connection, what: str, content: Any) -> None:
    connection.send_bytes(orjson.dumps([what, content]))


class _Forward(logging.Handler):
    """The child's log records, sent to keeper to log under their logger."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(logging.INFO)
        self.connection = connection

    def emit(self, record: logging.LogRecord) -> None:
        try:
            _send(self.connection, "log", [record.levelno, record.name, record.getMessage()])
        except (OSError, ValueError):
            os._exit(1)  # keeper went: nothing staged from here on could commit


__all__ = ["Apart", "stage_apart", "stage_here"]
