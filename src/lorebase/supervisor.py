"""`lorebase up`: the whole stack in one command, stopped as a whole on SIGINT/SIGTERM.

Starts the embedded PostgreSQL and NATS unless database.url / nats.url name servers (with the
credentials of the data directory: lorebase.embedded.credentials), migrates the database as the
application role, runs keeper, feed, scribe and gateway as child processes on free loopback ports,
waits for the gateway's /health, optionally loads an example, and then watches: a part that dies is
started again with backoff (lorebase.supervision). Whatever ends it (a signal, a crash loop, a
failed step), everything it started is stopped in reverse order.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit, urlunsplit

import httpx
import psutil

from lorebase.config import Settings
from lorebase.embedded import (
    EmbeddedNats,
    EmbeddedPostgres,
    EmbeddedServerError,
    free_port,
    kept_secret,
    owned_child,
    prepare_app_database,
)
from lorebase.embedded.credentials import ADMIN_KEY_FILE, POSTGRES_APP_FILE, WEBHOOK_KEY_FILE
from lorebase.supervision import CrashLoop, RestartPolicy, ServerProcess, ServiceProcess, Supervisor, say

# Started in this order, stopped in the reverse one.
SERVICES = ("keeper", "feed", "scribe", "gateway")
GRPC_SERVICES = ("keeper", "feed", "scribe")
DATABASE = "lorebase"
APP_ROLE = "lorebase"
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


def _exit_code(returncode: int) -> int:
    """A non-zero exit code for a process that ended with `returncode` (negative: killed by a signal)."""
    if returncode < 0:
        return 128 - returncode
    return returncode or 1


@dataclass
class _Stack:
    """What `up` started, so that it can all be stopped whatever happened."""

    settings: Settings
    supervisor: Supervisor
    started_at: float = field(default_factory=time.time)

    def stop(self) -> None:
        self.supervisor.stop()
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        """A child started just as a signal unwound `up` can miss the bookkeeping: end it here."""
        leftovers = []
        for proc in psutil.Process().children():
            try:
                if proc.status() != psutil.STATUS_ZOMBIE and proc.create_time() >= self.started_at - 1:
                    say(f"stopping leftover process {proc.pid} ({' '.join(proc.cmdline()[:3])})")
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
    configured = settings.model.admin.key
    if configured:
        return configured
    path = data_dir / ADMIN_KEY_FILE
    key, new = kept_secret(path, prefix="lbk_")
    if new:
        print(f"Admin key (shown once, also in {path}): {key}", flush=True)
    return key


def _start_servers(stack: _Stack, data_dir: Path) -> tuple[str, str]:
    """The database and NATS URLs, starting the embedded servers for the ones not configured. The
    services reach the embedded PostgreSQL as the application role, the embedded NATS with its token."""
    db_url = stack.settings.model.database.url
    if not db_url:
        say(f"starting the embedded PostgreSQL in {data_dir / 'postgres'}")
        postgres = EmbeddedPostgres(data_dir)
        stack.supervisor.add(ServerProcess("PostgreSQL", postgres))
        password, _ = kept_secret(data_dir / POSTGRES_APP_FILE)
        db_url = asyncio.run(prepare_app_database(postgres.url, DATABASE, role=APP_ROLE, password=password))
    nats_url = stack.settings.model.nats.url
    if not nats_url:
        say(f"starting the embedded NATS in {data_dir / 'nats'}")
        nats = EmbeddedNats(data_dir)
        stack.supervisor.add(ServerProcess("NATS", nats))
        nats_url = nats.url
    return db_url, nats_url


def _migrate(db_url: str) -> None:
    say("migrating the database")
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
        LOREBASE_HTTP_HOST=settings.model.http.host,
        LOREBASE_HTTP_PORT=str(settings.model.http.port),
    )
    if not settings.model.webhooks.encryption_key:
        path = data_dir / WEBHOOK_KEY_FILE
        kept_secret(path, prefix="whk_")
        env["LOREBASE_WEBHOOKS__ENCRYPTION_KEY"] = f"secret://file/{path}"
    if settings.model.logging.format == "auto":
        # The services write into a pipe of ours: decide "auto" by our own stderr.
        env["LOREBASE_LOGGING__FORMAT"] = "text" if sys.stderr.isatty() else "json"
    for name, port in zip(GRPC_SERVICES, sorted(ports), strict=True):
        env[f"LOREBASE_SERVICES__{name.upper()}__LISTEN"] = f"127.0.0.1:{port}"
        env[f"LOREBASE_SERVICES__{name.upper()}__ADDRESS"] = f"127.0.0.1:{port}"
    return env


def _start_services(stack: _Stack, env: dict[str, str]) -> None:
    for name in SERVICES:
        model = stack.settings.model
        grace = model.http.shutdown_grace_s if name == "gateway" else model.services.shutdown_grace_s
        service = ServiceProcess(
            name,
            [sys.executable, "-m", "lorebase", name],
            env,
            lambda: owned_child(signal.SIGTERM),
            stop_timeout_s=grace + CHILD_STOP_TIMEOUT_S,
        )
        stack.supervisor.add(service)


def _wait_healthy(stack: _Stack, base_url: str) -> None:
    timeout_s = stack.settings.model.supervisor.start_timeout_s
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=base_url, timeout=2.0, trust_env=False) as client:
        while True:
            stack.supervisor.watch(0)
            try:
                if client.get("/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                down = ", ".join(stack.supervisor.down()) or "none"
                raise _Failed(
                    f"{base_url}/health did not answer 200 within {timeout_s:g} s (supervisor.start_timeout_s; down: {down})"
                )
            stack.supervisor.watch(0.2)


def _load_example(stack: _Stack, example: str, base_url: str, admin_key: str) -> None:
    """Load it on a thread while this one goes on supervising (and copying the services' output).
    A service started again meanwhile misses the kernel's stop-with-parent (owned_child: only from
    the only thread); the cleanup of `up` still stops it."""
    from lorebase.examples import load_example

    say(f"loading the example {example!r}")
    outcome: list[bool | BaseException] = []

    def load() -> None:
        try:
            outcome.append(load_example(example, base_url=base_url, admin_key=admin_key))
        except BaseException as exc:  # handed to the supervising thread
            outcome.append(exc)

    loader = threading.Thread(target=load, name="example", daemon=True)
    loader.start()
    while loader.is_alive():
        stack.supervisor.watch(0.1)
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    if not outcome[0]:
        say(f"the example {example!r} is loaded already")


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
    host, port = settings.model.http.host, settings.model.http.port
    _check_http_port_free(host, port)
    data_dir = settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    db_url, nats_url = _start_servers(stack, data_dir)
    _migrate(db_url)
    admin_key = _admin_key(settings, data_dir)
    env = _service_env(settings, data_dir, db_url, nats_url, admin_key)
    _start_services(stack, env)
    base_url = f"http://{_client_host(host)}:{port}"
    _wait_healthy(stack, base_url)
    if example:
        _load_example(stack, example, base_url, admin_key)
    print(f"Lorebase is up: {base_url} (Ctrl-C stops it)", flush=True)
    print(addresses(base_url, env, db_url, nats_url), flush=True)
    while True:
        stack.supervisor.watch(3600)


def without_secret(url: str) -> str:
    """`url` with the user part's secret left out (a NATS token, a PostgreSQL password)."""
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    user = "" if parts.password is None else f"{parts.username}@"  # a lone user part is a token
    host = parts.hostname or ""
    netloc = f"{user}{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def addresses(base_url: str, env: dict[str, str], db_url: str, nats_url: str) -> str:
    """Where each part of the stack answers, for the other clients (docs/running.md): the web app,
    the gRPC services (with reflection), NATS and PostgreSQL, without their secrets."""
    grpc = ", ".join(f"{name} {env[f'LOREBASE_SERVICES__{name.upper()}__ADDRESS']}" for name in GRPC_SERVICES)
    return "\n".join(
        (
            f"  web app     {base_url}/app/",
            f"  REST        {base_url}/api/v1 (OpenAPI: {base_url}/openapi.json)",
            f"  gRPC        {grpc} (server reflection on)",
            f"  NATS        {without_secret(nats_url)} (stream LOREBASE; docs/feed.md, 'Consume from NATS')",
            f"  PostgreSQL  {without_secret(db_url)}",
        )
    )


def _install_handlers(stopping: Callable[[], bool]) -> dict[int, object]:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        if not stopping():
            raise _Stopped(signum)

    return {sig: signal.signal(sig, on_signal) for sig in _STOP_SIGNALS}


def up(settings: Settings, *, example: str | None) -> int:
    """Run the stack until SIGINT/SIGTERM (exit code 0) or until a part of it fails (non-zero)."""
    try:
        policy = RestartPolicy.from_settings(settings)
    except ValueError as exc:
        say(f"{exc}; not starting")
        return 2
    stack = _Stack(settings, Supervisor(policy))
    stopping = False
    previous = _install_handlers(lambda: stopping)
    code = 0
    try:
        code = _run(stack, example)
    except _Stopped as stop:
        say(f"{signal.Signals(stop.signum).name} received; stopping")
    except (_Failed, CrashLoop) as failure:
        say(f"{failure}\nstopping" if "\n" in str(failure) else f"{failure}; stopping")
        code = _exit_code(failure.code) if isinstance(failure, CrashLoop) else failure.code
    except EmbeddedServerError as exc:
        say(f"{exc}\nstopping")
        code = 1
    except Exception as exc:
        traceback.print_exc()
        say(f"{type(exc).__name__}: {exc}; stopping")
        code = 1
    finally:
        stopping = True
        try:
            stack.stop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)  # type: ignore[arg-type]
    say("stopped")
    return code


__all__ = ["SERVICES", "up"]
