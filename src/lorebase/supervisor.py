"""`lorebase up`: the whole stack in one command, stopped as a whole on SIGINT/SIGTERM.

Starts the embedded PostgreSQL and NATS unless database.url / nats.url name servers, migrates the
database, runs keeper, feed, scribe and gateway as child processes on free loopback ports, waits for
the gateway's /health, optionally loads an example, and then watches. Whatever ends it (a signal, a
child that dies, a failed step), everything it started is stopped in reverse order.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import httpx
import psutil

from lorebase.config import Settings
from lorebase.embedded import (
    EmbeddedNats,
    EmbeddedPostgres,
    EmbeddedServerError,
    create_database,
    database_url,
    free_port,
    owned_child,
)

# Started in this order, stopped in the reverse one.
SERVICES = ("keeper", "feed", "scribe", "gateway")
GRPC_SERVICES = ("keeper", "feed", "scribe")
DATABASE = "lorebase"
HEALTH_TIMEOUT_S = 60.0
CHILD_STOP_TIMEOUT_S = 10.0
_STOP_SIGNALS = tuple(
    sig for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if sig is not None
)


class _Stopped(BaseException):
    """A stop signal arrived: unwind (like KeyboardInterrupt) to the cleanup."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _Failed(Exception):
    """A step of `up` failed; the message is for the user, `code` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _say(message: str) -> None:
    print(f"lorebase: {message}", file=sys.stderr, flush=True)


def _exit_code(returncode: int) -> int:
    """A non-zero exit code for a process that ended with `returncode` (negative: killed by a signal)."""
    if returncode < 0:
        return 128 - returncode
    return returncode or 1


@dataclass
class _Child:
    name: str
    process: subprocess.Popen[bytes]
    # SIGTERM, then this long (the service's shutdown grace plus a margin) before SIGKILL.
    stop_timeout_s: float = CHILD_STOP_TIMEOUT_S

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                _say(f"{self.name} did not stop within {self.stop_timeout_s:.0f} s; killing it")
                self.process.kill()
        code = self.process.wait()
        if code not in (0, -signal.SIGTERM):
            _say(f"{self.name} exited with code {code}")


@dataclass
class _Stack:
    """What `up` started, so that it can all be stopped whatever happened."""

    settings: Settings
    postgres: EmbeddedPostgres | None = None
    nats: EmbeddedNats | None = None
    children: list[_Child] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)

    def dead_child(self) -> tuple[str, int] | None:
        """The name and exit code of a process of the stack that has exited."""
        for child in self.children:
            code = child.process.poll()
            if code is not None:
                return child.name, code
        for name, server in (("PostgreSQL", self.postgres), ("NATS", self.nats)):
            code = server.poll() if server is not None else None
            if code is not None:
                return name, code
        return None

    def stop(self) -> None:
        for child in reversed(self.children):
            child.stop()
        self.children.clear()
        for server in (self.nats, self.postgres):
            if server is not None:
                server.stop()
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        """A child started just as a signal unwound `up` can miss the bookkeeping: end it here."""
        leftovers = []
        for proc in psutil.Process().children():
            try:
                if proc.status() != psutil.STATUS_ZOMBIE and proc.create_time() >= self.started_at - 1:
                    _say(f"stopping leftover process {proc.pid} ({' '.join(proc.cmdline()[:3])})")
                    proc.terminate()
                    leftovers.append(proc)
            except psutil.NoSuchProcess:
                continue
        _, alive = psutil.wait_procs(leftovers, timeout=CHILD_STOP_TIMEOUT_S)
        for proc in alive:
            proc.kill()
        psutil.wait_procs(alive, timeout=5)


def _client_host(host: str) -> str:
    """The address to reach a server that listens on `host`, as it goes in a URL."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _admin_key(settings: Settings, data_dir: Path) -> str:
    """The configured key; else the one kept in <data_dir>/admin.key; else a new one, shown once."""
    configured = str(settings.get("admin.key") or "")
    if configured:
        return configured
    path = data_dir / "admin.key"
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    key = "lbk_" + secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    print(f"Admin key (shown once, also in {path}): {key}", flush=True)
    return key


def _start_servers(stack: _Stack, data_dir: Path) -> tuple[str, str]:
    """The database and NATS URLs, starting the embedded servers for the ones not configured."""
    db_url = str(stack.settings.get("database.url") or "")
    if not db_url:
        _say(f"starting the embedded PostgreSQL in {data_dir / 'postgres'}")
        stack.postgres = EmbeddedPostgres(data_dir)
        server_url = stack.postgres.start()
        asyncio.run(create_database(server_url, DATABASE, exist_ok=True))
        db_url = database_url(server_url, DATABASE)
    nats_url = str(stack.settings.get("nats.url") or "")
    if not nats_url:
        _say(f"starting the embedded NATS in {data_dir / 'nats'}")
        stack.nats = EmbeddedNats(data_dir)
        nats_url = stack.nats.start()
    return db_url, nats_url


def _migrate(db_url: str) -> None:
    _say("migrating the database")
    from lorebase_store.migrate import upgrade

    upgrade(db_url)


def _service_env(
    settings: Settings, data_dir: Path, db_url: str, nats_url: str, admin_key: str
) -> dict[str, str]:
    ports: set[int] = set()
    while len(ports) < len(GRPC_SERVICES):
        ports.add(free_port())
    env = dict(os.environ)
    env.update(
        LOREBASE_DATA_DIR=str(data_dir),
        LOREBASE_DATABASE_URL=db_url,
        LOREBASE_NATS_URL=nats_url,
        LOREBASE_ADMIN_KEY=admin_key,
        LOREBASE_HTTP_HOST=str(settings.get("http.host")),
        LOREBASE_HTTP_PORT=str(settings.get("http.port")),
    )
    for name, port in zip(GRPC_SERVICES, sorted(ports), strict=True):
        env[f"LOREBASE_SERVICES__{name.upper()}__LISTEN"] = f"127.0.0.1:{port}"
        env[f"LOREBASE_SERVICES__{name.upper()}__ADDRESS"] = f"127.0.0.1:{port}"
    return env


def _check_alive(stack: _Stack, while_doing: str) -> None:
    dead = stack.dead_child()
    if dead is not None:
        name, code = dead
        raise _Failed(f"{name} exited with code {code} {while_doing}", _exit_code(code))


def _wait_healthy(stack: _Stack, base_url: str) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    with httpx.Client(base_url=base_url, timeout=2.0, trust_env=False) as client:
        while True:
            _check_alive(stack, "while the stack was starting")
            try:
                if client.get("/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise _Failed(f"{base_url}/health did not answer 200 within {HEALTH_TIMEOUT_S:.0f} s")
            time.sleep(0.2)


def _check_http_port_free(host: str, port: int) -> None:
    """Fail early: with the port taken, /health could answer from whatever else listens there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host or "0.0.0.0", port))
        except OSError as exc:
            raise _Failed(f"cannot listen on {host}:{port} (http.host, http.port): {exc.strerror}") from None


def _run(stack: _Stack, example: str | None) -> int:
    settings = stack.settings
    host, port = str(settings.get("http.host") or ""), int(settings.get("http.port"))
    _check_http_port_free(host, port)
    data_dir = settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    db_url, nats_url = _start_servers(stack, data_dir)
    _migrate(db_url)
    admin_key = _admin_key(settings, data_dir)
    env = _service_env(settings, data_dir, db_url, nats_url, admin_key)
    for name in SERVICES:
        process = subprocess.Popen(
            [sys.executable, "-m", "lorebase", name],
            env=env,
            stdin=subprocess.DEVNULL,
            **owned_child(signal.SIGTERM),
        )
        grace = settings.get("http.shutdown_grace_s" if name == "gateway" else "services.shutdown_grace_s")
        stack.children.append(_Child(name, process, float(grace or 0) + CHILD_STOP_TIMEOUT_S))
    base_url = f"http://{_client_host(host)}:{port}"
    _wait_healthy(stack, base_url)
    if example:
        from lorebase.examples import load_example

        _say(f"loading the example {example!r}")
        if not load_example(example, base_url=base_url, admin_key=admin_key):
            _say(f"the example {example!r} is loaded already")
    print(f"Lorebase is up: {base_url} (Ctrl-C stops it)", flush=True)
    while True:
        _check_alive(stack, "unexpectedly")
        time.sleep(0.5)


def _install_handlers(stopping: Callable[[], bool]) -> dict[int, object]:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        if not stopping():
            raise _Stopped(signum)

    return {sig: signal.signal(sig, on_signal) for sig in _STOP_SIGNALS}


def up(settings: Settings, *, example: str | None) -> int:
    """Run the stack until SIGINT/SIGTERM (exit code 0) or until a part of it fails (non-zero)."""
    stack = _Stack(settings)
    stopping = False
    previous = _install_handlers(lambda: stopping)
    code = 0
    try:
        code = _run(stack, example)
    except _Stopped as stop:
        _say(f"{signal.Signals(stop.signum).name} received; stopping")
    except _Failed as failure:
        _say(f"{failure}; stopping")
        code = failure.code
    except EmbeddedServerError as exc:
        _say(f"{exc}\nstopping")
        code = 1
    except Exception as exc:
        traceback.print_exc()
        _say(f"{type(exc).__name__}: {exc}; stopping")
        code = 1
    finally:
        stopping = True
        try:
            stack.stop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)  # type: ignore[arg-type]
    _say("stopped")
    return code


__all__ = ["SERVICES", "up"]
