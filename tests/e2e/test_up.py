"""`lorebase up` as the README runs it: the stack comes up with the supply example, stops cleanly on
SIGINT leaving no process behind, and a second start on the same data dir finds the data again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from lorebase.embedded import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

ADMIN_KEY = "lbk_e2e-known-admin-key-0123456789"
RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"
HEALTH_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0


class Stack:
    """One `lorebase up` child process, its output in a file."""

    def __init__(self, data_dir: Path, port: int, log: Path, *args: str) -> None:
        env = {name: value for name, value in os.environ.items() if not name.startswith("LOREBASE_")}
        env.update(
            LOREBASE_DATA_DIR=str(data_dir), LOREBASE_HTTP_PORT=str(port), LOREBASE_ADMIN_KEY=ADMIN_KEY
        )
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

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-6000:]

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
        procs += _mentioning(self.data_dir)
        for proc in procs:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(procs, timeout=10)


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _mentioning(data_dir: Path) -> list[psutil.Process]:
    """Running processes whose command line names the data dir (the postgres and nats-server servers)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if (
            proc.pid != os.getpid()
            and any(str(data_dir) in part for part in proc.info["cmdline"] or [])
            and _alive(proc)
        ):
            found.append(proc)
    return found


@pytest.fixture
def stacks() -> Iterator[list[Stack]]:
    started: list[Stack] = []
    try:
        yield started
    finally:
        for stack in started:
            stack.kill_all()


def _read_supplier(client: httpx.Client, stack: Stack) -> dict[str, object]:
    response = client.get(f"{stack.base_url}{RECORD}", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert response.status_code == 200, f"{response.status_code} {response.text}\n{stack.output()}"
    values: dict[str, object] = response.json()["values"]
    return values


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _stop_and_check_nothing_is_left(stack: Stack) -> None:
    procs = stack.descendants()
    programs = {Path(_cmdline(proc)[0]).name for proc in procs if _cmdline(proc)}
    assert {"postgres", "nats-server"} <= programs, programs
    services = [_cmdline(proc)[3] for proc in procs if _cmdline(proc)[1:3] == ["-m", "lorebase"]]
    assert sorted(services) == ["feed", "gateway", "keeper", "scribe"], services
    assert stack.interrupt() == 0, stack.output()
    psutil.wait_procs(procs, timeout=10)
    left = [proc for proc in procs if _alive(proc)]
    assert not left, [(p.pid, _cmdline(p)) for p in left]
    left = _mentioning(stack.data_dir)
    assert not left, [(p.pid, _cmdline(p)) for p in left]


def test_up_loads_the_example_stops_cleanly_and_keeps_the_data(tmp_path: Path, stacks: list[Stack]) -> None:
    data_dir = tmp_path / "data"
    with httpx.Client(timeout=30.0, trust_env=False) as client:
        first = Stack(data_dir, free_port(), tmp_path / "up-1.log", "--example", "supply")
        stacks.append(first)
        first.wait_healthy(client)
        # /health answers before the example is loaded: wait for the banner printed after it.
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while "Lorebase is up" not in first.output():
            assert first.process.poll() is None, first.output()
            assert time.monotonic() < deadline, first.output()
            time.sleep(0.25)
        values = _read_supplier(client, first)
        assert values["legal_name"] == "Kavsen Alloys Sp. z o.o."
        assert values["risk_score"] == "90"
        _stop_and_check_nothing_is_left(first)

        again = Stack(data_dir, free_port(), tmp_path / "up-2.log")
        stacks.append(again)
        again.wait_healthy(client)
        assert _read_supplier(client, again)["risk_score"] == "90"
        _stop_and_check_nothing_is_left(again)
    assert "Admin key (shown once" not in first.output()  # LOREBASE_ADMIN_KEY was set
