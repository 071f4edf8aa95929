"""`lorebase up` for the end-to-end tests: the stack the CLI, Herald and example agent tests share
(tests/e2e/conftest.py starts it), and `Stack`, one `lorebase up` of a test's own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

ADMIN_KEY = "lbk_e2e-session-admin-key-0123456789"
OWN_ADMIN_KEY = "lbk_e2e-known-admin-key-0123456789"
# How long a stack may take to answer /health: long, since a loaded machine (CI's 2 cores, other
# suites) starts four Python services slowly; a stack that never starts fails the test either way.
HEALTH_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Running:
    url: str
    admin_key: str
    agent_key: str  # agt_e2e: a service principal (an agent), editor on supply
    part_viewer_key: str  # usr_parts: viewer on supply, narrowed to the Kind Part
    log: Path
    data_dir: Path

    def env(self, key: str | None = None) -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith("LOREBASE_")}
        env.update(LOREBASE_URL=self.url, LOREBASE_KEY=key or self.admin_key)
        return env


def principal(http: httpx.Client, principal: str, type: str, role: str, kinds: list[str] | None) -> str:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    response = http.post("/api/v1/principals", json={"id": principal, "type": type}, headers=admin)
    assert response.status_code == 201, response.text
    grant: dict[str, object] = {"principal": principal, "role": role}
    if kinds:
        grant["kinds"] = kinds
    response = http.post("/api/v1/domains/supply/grants", json=grant, headers=admin)
    assert response.status_code == 201, response.text
    response = http.post(f"/api/v1/principals/{principal}/keys", headers=admin)
    assert response.status_code == 201, response.text
    return str(response.json()["key"])


def up_env(data_dir: Path, port: int, admin_key: str, **settings: str) -> dict[str, str]:
    """The environment of a `lorebase up` child: this process's without its LOREBASE_* variables,
    then the data directory, port, admin key, a start timeout as long as the tests' own, and
    `settings` (more LOREBASE_* variables)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("LOREBASE_")}
    env.update(
        LOREBASE_DATA_DIR=str(data_dir),
        LOREBASE_HTTP_PORT=str(port),
        LOREBASE_ADMIN_KEY=admin_key,
        LOREBASE_SUPERVISOR__START_TIMEOUT_S=str(HEALTH_TIMEOUT_S),
    )
    env.update(settings)
    return env


class Stack:
    """One `lorebase up` child process, its output in a file."""

    def __init__(
        self, data_dir: Path, port: int, log: Path, *args: str, settings: dict[str, str] | None = None
    ) -> None:
        """`settings`: more LOREBASE_* variables for this stack."""
        env = up_env(data_dir, port, OWN_ADMIN_KEY, **(settings or {}))
        self.admin = {"Authorization": f"Bearer {OWN_ADMIN_KEY}"}
        self.data_dir = data_dir
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}"
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "lorebase", "up", *args],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self, *, whole: bool = False) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return text if whole else text[-6000:]

    def wait_up(self, client: httpx.Client) -> None:
        """Until `up` prints its banner (after the example, if any, is loaded)."""
        self.wait_healthy(client)
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while "Lorebase is up" not in self.output():
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.25)

    def wait_healthy(self, client: httpx.Client) -> None:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while True:
            code = self.process.poll()
            if code is not None:
                pytest.fail(f"lorebase up exited with code {code} before /health answered:\n{self.output()}")
            try:
                if client.get(f"{self.base_url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"/health did not answer 200 within {HEALTH_TIMEOUT_S:.0f} s:\n{self.output()}")
            time.sleep(0.25)

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"lorebase up did not exit within {STOP_TIMEOUT_S:.0f} s of SIGINT:\n{self.output()}")

    def kill_all(self) -> None:
        """After a failure: leave nothing running, whatever state the stack is in."""
        procs = self.descendants()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        procs += mentioning(self.data_dir)
        for proc in procs:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(procs, timeout=10)


def alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def mentioning(data_dir: Path) -> list[psutil.Process]:
    """Running processes whose command line names the data dir (the postgres and nats-server servers)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if (
            proc.pid != os.getpid()
            and any(str(data_dir) in part for part in proc.info["cmdline"] or [])
            and alive(proc)
        ):
            found.append(proc)
    return found


def cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def stop(process: subprocess.Popen[bytes], data_dir: Path) -> None:
    children = []
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        pass
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(children, timeout=10)


__all__ = [
    "ADMIN_KEY",
    "HEALTH_TIMEOUT_S",
    "OWN_ADMIN_KEY",
    "Running",
    "Stack",
    "alive",
    "cmdline",
    "mentioning",
    "principal",
    "stop",
    "up_env",
]
