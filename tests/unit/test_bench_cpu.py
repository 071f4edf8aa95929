"""The bench harness's CPU accounting (bench/cpu.py) and the cold reads' numbering (bench/reads.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from bench import cpu
from bench.agent_reads import Big
from bench.reads import cold_sql, record_path

BURN = "import time\nwhile time.process_time() < 0.3:\n    pass\n"


def test_service_role_from_the_command_line() -> None:
    assert cpu.service_role(["/venv/bin/python", "-m", "lorebase", "keeper"]) == "keeper"
    assert cpu.service_role(["python", "-m", "lorebase", "gateway", "--x"]) == "gateway"
    assert cpu.service_role(["python", "-m", "lorebase", "up", "--example", "supply"]) is None
    assert cpu.service_role(["python", "lorebase", "keeper"]) is None
    assert cpu.service_role([]) is None


def test_a_process_that_ended_still_counts_through_its_parent() -> None:
    """PostgreSQL's backends come and go: the reaped ones are in the postmaster's cutime + cstime."""
    meter = cpu.Meter(postmaster_pid=os.getpid())
    before = meter.snapshot()
    subprocess.run([sys.executable, "-c", BURN], check=True)
    usage = meter.usage(before, meter.snapshot(), requests=10)
    # 0.3 s of the child's CPU over 10 requests: at least ~0.03 s each (clock ticks round down).
    assert usage.per_request_s["postgres"] >= 0.025
    assert usage.requests == 10
    assert usage.total_s >= usage.per_request_s["postgres"]


def test_an_added_process_counts_with_its_role() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", BURN + "import sys\nsys.stdin.read()\n"], stdin=subprocess.PIPE
    )
    try:
        meter = cpu.Meter()
        meter.add(child.pid, "keeper")
        assert meter.services() == {child.pid: "keeper"}
        before = dict.fromkeys(cpu.ROLES, 0)
        # Wait until the child has burnt its CPU (it then blocks reading stdin).
        while meter.snapshot()["keeper"] * cpu.TICK_S < 0.25:
            os.sched_yield()
        assert meter.usage(before, meter.snapshot(), requests=1).ms("keeper") >= 250
    finally:
        child.communicate(b"")


def test_no_meter_no_cpu_figures() -> None:
    assert cpu.METER is None
    assert cpu.measured(lambda: 3, lambda result: result) == (3, None)
    assert cpu.end(cpu.begin(), 5) is None
    assert cpu.table([("a measure", None, "1.0x")])[-1] == ""


def test_cold_paths_number_the_records_as_the_generated_domain_keys_them() -> None:
    big = Big(total=1000, suppliers=10, parts=100, orders=890, load_s=0.0)
    prefix = "/api/v1/domains/big/kinds/"
    assert record_path(big, 0) == prefix + "Supplier/records/S-0000"
    assert record_path(big, 9) == prefix + "Supplier/records/S-0009"
    assert record_path(big, 10) == prefix + "Part/records/P-00000"
    assert record_path(big, 109) == prefix + "Part/records/P-00099"
    assert record_path(big, 110) == prefix + "PurchaseOrder/records/PO-000000"
    assert record_path(big, 999) == prefix + "PurchaseOrder/records/PO-000889"
    sql = cold_sql(big, 7)
    assert "random(0, 999)" in sql
    assert "\\if :n < 10" in sql and "\\elif :n < 110" in sql and "\\set m :n - 110" in sql
