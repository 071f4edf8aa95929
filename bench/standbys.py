"""Reads on PostgreSQL standbys in `make bench` (issue 26; docs/operations.md, "Reads on standbys").

After the main stack has stopped, the cluster harness (lorebase.cluster) starts with one keeper and
one gateway (values written here: one replica of each service) over its PostgreSQL topology, a
primary with a synchronous and an asynchronous standby, and loads the supply example. The same
reads are then measured three times, keeper restarted between them with `database.standby_urls`
naming no standby, `sync1`, then `sync1` and `async1`: `GET` of a Record `at` a full Revision (a
read that a standby which has replayed that Revision may serve), 8 clients (wrk), ROUNDS runs of
DURATION_S each, the median. Each row gives reads per second beside the primary alone and the CPU
milliseconds per read of the gateway, keeper and each PostgreSQL server (postmaster and backends,
from /proc, as bench/cpu.py counts them). Starting the topology takes a bounded time (the servers
are local; `STARTUP_TIMEOUT_S`); LOREBASE_BENCH_STANDBYS=0 skips the step.

On one machine the standbys share the primary's cores: what moves is where the database's CPU is
spent, not how much there is, so the rates measure the routing's cost here, not a second machine's
capacity.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import yaml

from bench import cpu
from bench.report import Measure
from lorebase.cluster import Cluster
from lorebase.cluster.values import COMPONENTS

ENABLED = os.environ.get("LOREBASE_BENCH_STANDBYS", "1") != "0"
RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1003"
STARTUP_TIMEOUT_S = 300.0
CONFIGURATIONS = (
    ("the primary alone", ()),
    ("1 standby (sync1)", ("sync1",)),
    ("2 standbys", ("sync1", "async1")),
)
VALUES = {
    "database": {"existingSecret": {"name": "lorebase-connections", "key": "database-url"}},
    "externalNats": {"existingSecret": {"name": "lorebase-connections", "key": "nats-url"}},
    "config": {"database": {"standby_wait_s": 0.05, "standby_max_lag_s": 5}},
    **{name: {"replicas": 1} for name in COMPONENTS},
}


class _Meter(cpu.Meter):
    """The gateway and keeper of the harness, and every PostgreSQL server, as `postgres`; `servers`
    keeps each server's own ticks too."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__()
        self.cluster = cluster

    def services(self) -> dict[int, str]:
        found: dict[int, str] = {}
        for name in ("gateway", "keeper"):
            unit = self.cluster.service(name, 0)
            if unit is not None and unit.process is not None:
                found[unit.process.pid] = name
        return found

    def servers(self) -> dict[str, int]:
        ticks: dict[str, int] = {}
        for server in self.cluster.postgres.servers:
            pid = server.server.pid
            if pid is not None:
                ticks[server.name] = cpu._ticks(pid, children=True) + sum(
                    cpu._ticks(child) for child in cpu._child_pids(pid)
                )
        return ticks

    def snapshot(self) -> dict[str, int]:
        used = super().snapshot()
        used["postgres"] = sum(self.servers().values())
        return used


def _wait_reads(base: str, headers: dict[str, str], revision: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if (
                httpx.get(base + RECORD, params={"at": revision}, headers=headers, timeout=5).status_code
                == 200
            ):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"the standby bench's keeper did not answer within {STARTUP_TIMEOUT_S:.0f} s")


def run(wrk: Callable[..., Measure], rounds: int) -> list[str]:
    """The step's lines for RESULTS.md (a table), or none when skipped."""
    if not ENABLED:
        return []
    with tempfile.TemporaryDirectory(prefix="lorebase-bench-standbys-") as directory:
        values = Path(directory) / "values.yaml"
        values.write_text(yaml.safe_dump(VALUES), encoding="utf-8")
        cluster = Cluster(
            Path(directory) / "cluster",
            values=values,
            settings={"LOREBASE_LOGGING__LEVEL": "WARNING"},
            quiet=True,
        )
        started = time.monotonic()
        try:
            cluster.start(example="supply")
            setup_s = time.monotonic() - started
            return _measure(cluster, wrk, rounds, setup_s)
        finally:
            cluster.stop()


def _measure(cluster: Cluster, wrk: Callable[..., Measure], rounds: int, setup_s: float) -> list[str]:
    gateway = f"http://127.0.0.1:{cluster.ports['gateway'][0]}"
    headers = cluster.admin
    head = httpx.get(gateway + RECORD, headers=headers, timeout=30)
    head.raise_for_status()
    revision = head.headers["Lorebase-Revision"]
    meter = _Meter(cluster)
    previous, cpu.METER = cpu.METER, meter
    results: list[tuple[str, Measure, dict[str, float]]] = []
    try:
        for name, standbys in CONFIGURATIONS:
            urls = [cluster.server_url(standby) for standby in standbys]
            env = {
                **cluster.env,
                "LOREBASE_DATABASE__STANDBY_URLS": yaml.safe_dump(
                    urls, default_flow_style=True, width=100000
                ).strip(),
            }
            cluster.start_service("keeper", 0, env=env)
            _wait_reads(gateway, headers, revision)
            runs = []
            for _ in range(rounds):
                before = meter.servers()
                measure = wrk(gateway + RECORD + f"?at={revision}", headers=headers)
                after = meter.servers()
                requests = max(1, measure.cpu.requests if measure.cpu else 1)
                per_server = {
                    server: (after[server] - before.get(server, 0)) * cpu.TICK_S * 1000 / requests
                    for server in after
                }
                runs.append((measure, per_server))
            runs.sort(key=lambda run: run[0].per_s)
            measure, per_server = runs[len(runs) // 2]
            results.append((name, measure, per_server))
    finally:
        cpu.METER = previous
    alone = results[0][1].per_s
    servers = [server.name for server in cluster.postgres.servers]
    lines = [
        f"Reads on standbys (bench/standbys.py; the cluster harness's PostgreSQL: a primary, sync1 and "
        f"async1 on this machine, started in {setup_s:.0f} s): GET of a Record `at` a full Revision, "
        "1 keeper, 1 gateway, 8 clients; CPU ms per read:",
        "",
        "| keeper reads from | reads/s | p50 ms | p99 ms | / primary alone | gateway | keeper | "
        + " | ".join(f"PostgreSQL {server}" for server in servers)
        + " | total |",
        "| --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in servers) + " | --- |",
    ]
    for name, measure, per_server in results:
        usage = measure.cpu
        gateway_ms = usage.ms("gateway") if usage else float("nan")
        keeper_ms = usage.ms("keeper") if usage else float("nan")
        cells = " | ".join(f"{per_server.get(server, 0.0):.3f}" for server in servers)
        total = gateway_ms + keeper_ms + sum(per_server.values())
        errors = f" ({measure.errors} non-2xx)" if measure.errors else ""
        lines.append(
            f"| {name}{errors} | {measure.per_s:.0f} | {measure.p50_ms:.2f} | {measure.p99_ms:.2f} "
            f"| {measure.per_s / alone:.2f}x | {gateway_ms:.3f} | {keeper_ms:.3f} | {cells} | {total:.3f} |"
        )
    return [*lines, ""]


if __name__ == "__main__":  # the step alone: python -m bench.standbys
    from bench.run import ROUNDS, wrk

    print("\n".join(run(wrk, ROUNDS)))
    sys.exit(0)
