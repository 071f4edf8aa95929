"""`make bench-scale` (issue 29): the generated Domain `big` at 10,000,000 Records (not part of
`make bench`: its load alone takes the better part of an hour on the 2-core development machine).

It starts the bench's stack (bench/stack.py), loads `big` to LOREBASE_BENCH_SCALE_FIRST Records
(1,000,000), settles it (VACUUM (ANALYZE), CHECKPOINT) and measures, then grows it with more
PurchaseOrders (numbered with 7 digits from the start) to LOREBASE_BENCH_SCALE_RECORDS (10,000,000),
settles and measures again, and reports each measure at both sizes with the growth ratio (target
<= 1.3x, issue 29):

- the import rate of each stage (Records per second, 100,000 Records and their Links per import);
- disk bytes per Record (the database's size, and records/links/history with their indexes);
- p50/p95 of context packs (depth 2, 1,500 tokens), resolve, query with coverage, and the history
  and lineage of one Record (200 requests each, 100 for history and lineage; one client);
- the memory of each process (resident set of each service; PostgreSQL's postmaster and backends as
  their unique sets summed, plus shared_buffers).

Results are printed and appended to bench/RESULTS.md (LOREBASE_BENCH_RESULTS names another file).
Check the free disk first: about 2 GB per million Records.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
import psutil

from bench import agent_reads, cpu, stack
from bench.report import machine
from bench.run import RESULTS, _settle

FIRST = int(os.environ.get("LOREBASE_BENCH_SCALE_FIRST", "1000000"))
RECORDS = int(os.environ.get("LOREBASE_BENCH_SCALE_RECORDS", "10000000"))
GROWTH_TARGET = 1.3


def _pct(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _timed(
    client: httpx.Client, method: str, path: str, headers: dict[str, str], body: object = None
) -> float:
    started = time.perf_counter()
    answer = client.request(method, path, json=body, headers=headers)
    assert answer.status_code == 200, answer.text[:300]
    return (time.perf_counter() - started) * 1000


def reads(up: stack.Stack, big: agent_reads.Big, offset: int) -> dict[str, tuple[float, float]]:
    """p50/p95 of each agent read over `big`, one client."""
    h = up.headers
    half = max(1, big.suppliers // 2)
    with httpx.Client(base_url=up.base, timeout=600) as client:
        _timed(client, "POST", "/api/v1/domains/big/resolve", h, {"text": "warm", "record_misses": False})
        record = "/api/v1/domains/big/kinds/Supplier/records/S-0042"
        order = f"/api/v1/domains/big/kinds/PurchaseOrder/records/PO-{big.orders - 7:0{big.order_width}d}"
        runs = {
            "context pack, depth 2, 1,500 tokens": [
                _timed(
                    client,
                    "POST",
                    "/api/v1/domains/big/context",
                    h,
                    {
                        "refs": [f"Supplier/S-{(offset + i * 37) % half:04d}"],
                        "depth": 2,
                        "budget_tokens": 1500,
                    },
                )
                for i in range(200)
            ],
            "resolve": [
                _timed(
                    client,
                    "POST",
                    "/api/v1/domains/big/resolve",
                    h,
                    {"text": agent_reads.RESOLVE_TEXTS[i % 8], "record_misses": False},
                )
                for i in range(200)
            ],
            "query with coverage": [
                _timed(client, "POST", "/api/v1/domains/big/query", h, agent_reads.QUERY) for _ in range(200)
            ],
            "history of a Supplier": [_timed(client, "GET", f"{record}/history", h) for _ in range(100)],
            "lineage of a Supplier": [_timed(client, "GET", f"{record}/lineage", h) for _ in range(100)],
            "lineage of a PurchaseOrder": [_timed(client, "GET", f"{order}/lineage", h) for _ in range(100)],
        }
    return {name: _pct(samples) for name, samples in runs.items()}


async def _disk(url: str) -> dict[str, int]:
    conn = await asyncpg.connect(url)
    try:
        out = {"database": int(await conn.fetchval("SELECT pg_database_size(current_database())"))}
        for table in ("records", "links", "history"):
            out[table] = int(await conn.fetchval(f"SELECT pg_total_relation_size('{table}')"))
        return out
    finally:
        await conn.close()


def memory(up: stack.Stack) -> dict[str, int]:
    """Bytes of memory of each process: services' resident sets, PostgreSQL's unique sets summed
    (its shared buffers are added once by the caller's line)."""
    out: dict[str, int] = {}
    for pid, role in up.meter.services().items():
        try:
            out[role] = out.get(role, 0) + psutil.Process(pid).memory_info().rss
        except psutil.Error:
            continue
    postmaster = psutil.Process(up.meter.postmaster_pid or 0)
    total = 0
    for process in [postmaster, *postmaster.children(recursive=True)]:
        try:
            total += process.memory_full_info().uss
        except psutil.Error:
            continue
    out["postgres"] = total
    return out


def stage(up: stack.Stack, big: agent_reads.Big, loaded_s: float, offset: int) -> dict[str, object]:
    asyncio.run(_settle(up.url))
    return {
        "big": big,
        "rate": (big.total - (0 if offset == 0 else FIRST)) / loaded_s,
        "disk": asyncio.run(_disk(up.url)),
        "reads": reads(up, big, offset),
        "memory": memory(up),
        "load": os.getloadavg()[0],
    }


def report(first: dict[str, object], last: dict[str, object]) -> list[str]:
    small, large = first["big"], last["big"]
    assert isinstance(small, agent_reads.Big) and isinstance(large, agent_reads.Big)
    lines = [
        f"## {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on {machine()}: `make bench-scale`",
        "",
        f"The generated Domain `big` at {small.total:,} and at {large.total:,} Records (bench/big_scale.py); "
        f"load average {first['load']:.2f} after the first measures, {last['load']:.2f} after the second.",
        "",
        f"- import: {small.total:,} Records at {first['rate']:.0f} Records/s, then {large.total - small.total:,} more "
        f"at {last['rate']:.0f} Records/s (100,000 Records and their Links per import)",
    ]
    for name, stats in (("at the first size", first), ("at the second size", last)):
        disk = stats["disk"]
        count = stats["big"].total  # type: ignore[attr-defined]
        assert isinstance(disk, dict)
        lines.append(
            f"- disk {name}: {disk['database'] / count:.0f} bytes per Record in the database "
            f"({disk['database'] / 1e9:.2f} GB); records {disk['records'] / count:.0f}, links "
            f"{disk['links'] / count:.0f}, history {disk['history'] / count:.0f} bytes per Record with their indexes"
        )
    lines += [
        "",
        f"| measure | p50 at {small.total:,} | p95 | p50 at {large.total:,} | p95 | growth p50 | growth p95 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    a, b = first["reads"], last["reads"]
    assert isinstance(a, dict) and isinstance(b, dict)
    for name in a:
        g50, g95 = b[name][0] / a[name][0], b[name][1] / a[name][1]
        met = "met" if max(g50, g95) <= GROWTH_TARGET else "missed"
        lines.append(
            f"| {name} | {a[name][0]:.1f} ms | {a[name][1]:.1f} ms | {b[name][0]:.1f} ms | {b[name][1]:.1f} ms | "
            f"{g50:.2f}x | {g95:.2f}x ({met}: <= {GROWTH_TARGET}x) |"
        )
    lines += ["", "| process | memory at the first size | at the second |", "| --- | --- | --- |"]
    m1, m2 = first["memory"], last["memory"]
    assert isinstance(m1, dict) and isinstance(m2, dict)
    for role in ("gateway", "keeper", "feed", "scribe", "postgres"):
        suffix = (
            " (unique sets of the postmaster and backends, + 128 MB shared_buffers)"
            if role == "postgres"
            else ""
        )
        lines.append(
            f"| {role}{suffix} | {m1.get(role, 0) / 2**20:.0f} MB | {m2.get(role, 0) / 2**20:.0f} MB |"
        )
    return lines


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="lorebase-bench-scale-"))
    # PurchaseOrders are numbered from 0: 7 digits past a million of them (the schema's pattern widened).
    width = max(6, len(str(max(0, RECORDS - 110_000 - 1))))
    try:
        with stack.started(work) as up:
            started = time.perf_counter()
            big = agent_reads.load(up.base, up.headers, FIRST, order_width=width)
            first = stage(up, big, time.perf_counter() - started, 0)
            print(f"{big.total} Records: {first}", flush=True)
            started = time.perf_counter()
            big = agent_reads.grow(up.base, up.headers, big, RECORDS)
            last = stage(up, big, time.perf_counter() - started, 7919)
            print(f"{big.total} Records: {last}", flush=True)
    finally:
        cpu.METER = None
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(report(first, last)) + "\n"
    print(text)
    with RESULTS.open("a") as handle:
        handle.write("\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
