"""Supervision by `lorebase up` (issue 12, item 5), on stacks started as the README starts them.

Under a steady write load, each of keeper, feed, scribe and gateway, then the embedded PostgreSQL and
NATS, is killed with SIGKILL in turn: `up` starts it again, the stack serves again without a hand
(writes are acknowledged again), and every write that was acknowledged (2xx with a Revision) is on
the branch's `/changes` afterwards. A service that can never start (a
setting breaks it) makes `/health` answer 503 naming it, and `up` stops the stack on the crash loop
with a message naming it and its last lines.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from lorebase.embedded import free_port
from tests.e2e.running import HEALTH_TIMEOUT_S, Stack, alive, cmdline, mentioning

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SERVICES = ("keeper", "feed", "scribe", "gateway")
# The embedded servers' programs, and the names `up` gives them.
SERVERS = {"postgres": "PostgreSQL", "nats-server": "NATS"}
OPERATION = "/api/v1/domains/supply/operations/update_supplier/execute"
CHANGES = "/api/v1/domains/supply/branches/main/changes"
# Acknowledged writes to see before a kill and after the stack is back.
WRITES_BETWEEN = 5


class WriteLoad:
    """`update_supplier` executed through REST in a loop on a thread, each with a new risk score;
    `acknowledged` holds the Revision of every 2xx answer that names one."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.acknowledged: list[str] = []
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="write-load", daemon=True)

    def __enter__(self) -> WriteLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        with httpx.Client(
            base_url=self.stack.base_url, headers=self.stack.admin, timeout=10, trust_env=False
        ) as client:
            score = 0
            while not self._stop.is_set():
                score = score % 100 + 1
                body = {"parameters": {"key": "S-1001", "risk_score": score}}
                try:
                    response = client.post(OPERATION, json=body)
                    revision = response.json().get("revision") if response.is_success else None
                except (httpx.HTTPError, ValueError):
                    revision = None
                if revision:
                    self.acknowledged.append(revision)
                else:
                    self.refused += 1
                    self._stop.wait(0.05)

    def wait_for_more(self, count: int) -> None:
        """Until `count` more writes than now are acknowledged."""
        target = len(self.acknowledged) + count
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while len(self.acknowledged) < target:
            assert self._thread.is_alive()
            assert time.monotonic() < deadline, f"writes stalled\n{self.stack.output()}"
            time.sleep(0.05)


def _process(stack: Stack, name: str) -> psutil.Process | None:
    """The running process of service `name`, or of the embedded server run by program `name`."""
    for proc in stack.descendants():
        line = cmdline(proc)
        if (line[1:4] == ["-m", "lorebase", name] or Path(line[0] if line else "").name == name) and alive(
            proc
        ):
            return proc
    return None


def _wait_restarted(stack: Stack, client: httpx.Client, name: str, killed: int) -> None:
    """Until `name` runs again (another process than `killed`) and /health answers 200."""
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while True:
        assert stack.process.poll() is None, stack.output()
        again = _process(stack, name)
        if again is not None and again.pid != killed:
            try:
                if client.get(f"{stack.base_url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
        assert time.monotonic() < deadline, f"{name} did not come back\n{stack.output()}"
        time.sleep(0.1)


def _committed(client: httpx.Client, stack: Stack, since: str) -> list[str]:
    revisions: list[str] = []
    while True:
        response = client.get(f"{stack.base_url}{CHANGES}", params={"since": since}, headers=stack.admin)
        assert response.status_code == 200, response.text
        page = response.json()
        revisions += [event["revision"] for event in page["events"]]
        since = page["next_since"]
        if not page["more"]:
            return revisions


def test_each_part_killed_under_writes_comes_back_and_no_acknowledged_write_is_lost(
    tmp_path: Path, stacks: list[Stack]
) -> None:
    stack = Stack(tmp_path / "data", free_port(), tmp_path / "up.log", "--example", "supply")
    stacks.append(stack)
    with httpx.Client(timeout=30, trust_env=False) as client:
        stack.wait_up(client)
        head = client.get(f"{stack.base_url}{CHANGES}", headers=stack.admin).json()["next_since"]
        with WriteLoad(stack) as load:
            for name in (*SERVICES, *SERVERS):
                load.wait_for_more(WRITES_BETWEEN)
                victim = _process(stack, name)
                assert victim is not None, stack.output()
                os.kill(victim.pid, signal.SIGKILL)
                _wait_restarted(stack, client, name, victim.pid)
            load.wait_for_more(WRITES_BETWEEN)
        committed = _committed(client, stack, head)
        missing = [revision for revision in load.acknowledged if revision not in set(committed)]
        assert not missing, (
            f"{len(missing)} of {len(load.acknowledged)} acknowledged writes are not on /changes"
        )
        assert len(set(committed)) == len(committed)
    output = stack.output(whole=True)
    for name in (*SERVICES, *SERVERS.values()):
        assert f"lorebase: {name} exited with code -9; restarting in 0.5 s (restart 1)" in output
    assert stack.interrupt() == 0, stack.output()


def test_a_service_that_cannot_start_is_named_by_health_and_stops_the_stack(
    tmp_path: Path, stacks: list[Stack]
) -> None:
    broken = {
        # Not an address: scribe logs that it cannot serve metrics there and exits with code 2.
        "LOREBASE_SERVICES__SCRIBE__METRICS_LISTEN": "256.0.0.1:9",
        "LOREBASE_SUPERVISOR__MAX_RESTARTS": "2",
        "LOREBASE_SUPERVISOR__BACKOFF_INITIAL_S": "2",
    }
    stack = Stack(tmp_path / "data", free_port(), tmp_path / "up.log", settings=broken)
    stacks.append(stack)
    answers: list[object] = []  # the bodies of /health's 503s
    procs: dict[int, psutil.Process] = {}  # every process of the stack seen
    with httpx.Client(timeout=30, trust_env=False) as client:
        while stack.process.poll() is None:
            procs.update((proc.pid, proc) for proc in stack.descendants())
            try:
                response = client.get(f"{stack.base_url}/health")
                if response.status_code == 503:
                    answers.append(response.json()["services"])
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    output = stack.output(whole=True)
    assert stack.process.returncode == 2, output
    assert {"keeper": True, "feed": True, "scribe": False} in answers, output
    assert "lorebase: scribe exited with code 2; restarting in 2 s (restart 1)" in output
    assert "lorebase: scribe exited with code 2; restarting in 4 s (restart 2)" in output
    loop = output.index(
        "lorebase: scribe is in a crash loop: it exited with code 2 after 2 restarts within 60 s"
    )
    assert "scribe cannot serve metrics on 256.0.0.1:9" in output[loop:], output
    assert output.rstrip().endswith("lorebase: stopped")
    assert len(procs) >= 6, procs  # postgres, nats-server, the services and scribe's restarts
    left = [proc for proc in procs.values() if alive(proc)] + mentioning(stack.data_dir)
    assert not left, [(proc.pid, cmdline(proc)) for proc in left]
