"""`lorebase up` as the README runs it: the stack comes up with the supply example, stops cleanly on
SIGINT leaving no process behind, and a second start on the same data dir finds the data again."""

from __future__ import annotations

from pathlib import Path

import httpx
import psutil
import pytest

from lorebase.embedded import free_port
from tests.e2e.running import Stack, alive, cmdline, mentioning

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"


def _read_supplier(client: httpx.Client, stack: Stack) -> dict[str, object]:
    response = client.get(f"{stack.base_url}{RECORD}", headers=stack.admin)
    assert response.status_code == 200, f"{response.status_code} {response.text}\n{stack.output()}"
    values: dict[str, object] = response.json()["values"]
    return values


def _stop_and_check_nothing_is_left(stack: Stack) -> None:
    procs = stack.descendants()
    programs = {Path(cmdline(proc)[0]).name for proc in procs if cmdline(proc)}
    assert {"postgres", "nats-server"} <= programs, programs
    services = [cmdline(proc)[3] for proc in procs if cmdline(proc)[1:3] == ["-m", "lorebase"]]
    assert sorted(services) == ["feed", "gateway", "keeper", "scribe"], services
    assert stack.interrupt() == 0, stack.output()
    psutil.wait_procs(procs, timeout=10)
    left = [proc for proc in procs if alive(proc)]
    assert not left, [(p.pid, cmdline(p)) for p in left]
    left = mentioning(stack.data_dir)
    assert not left, [(p.pid, cmdline(p)) for p in left]


def test_up_loads_the_example_stops_cleanly_and_keeps_the_data(tmp_path: Path, stacks: list[Stack]) -> None:
    data_dir = tmp_path / "data"
    with httpx.Client(timeout=30.0, trust_env=False) as client:
        first = Stack(data_dir, free_port(), tmp_path / "up-1.log", "--example", "supply")
        stacks.append(first)
        first.wait_up(client)  # /health answers before the example is loaded: wait for the banner
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
