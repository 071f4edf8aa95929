"""`make bench`: Lorebase through REST beside raw PostgreSQL on the same machine, in one run.

1. Starts an embedded PostgreSQL and NATS, then the stack with `lorebase up --example supply`
   against them (the README's path, with the servers named by URL), and loads the generated Domain
   `big` of LOREBASE_BENCH_BIG_RECORDS Records (1,000,000; bench/agent_reads.py) once for the cold
   reads and the agent reads, then runs VACUUM (ANALYZE) as an operator does after a bulk load.
2. Writes: Operation executes per second on one branch through REST, 8 concurrent clients (wrk),
   beside raw asyncpg single-row transactions (BEGIN; INSERT; COMMIT, synchronous_commit on) at
   1 connection on the same database: a branch is a serial chain of Revisions, so that is its limit.
   Each round's p99 over its p50 and the worst of them (issue 29's tail), with what PostgreSQL's
   backends waited on meanwhile (bench/write_tail.py); then the same spread over 8 branches, and
   the Revisions per commit transaction of each (how many commits a group carried).
3. Reads (bench/reads.py), 8 clients (wrk) beside pgbench point SELECTs at 8 connections: cold
   (random keys over `big`, beside random keys over the same rows) and repeated (the same Record
   and request, beside supply's 30 Suppliers).
4. Imports (bench/imports.py): 100,000 Records in one import through REST beside raw COPY of as
   many rows into a table shaped like `records` (LOREBASE_BENCH_IMPORT_RECORDS changes the count),
   ROUNDS pairs, the median reported; then one schema change set backfilling an Attribute over the
   imported Records beside a raw UPDATE of as many rows (LOREBASE_BENCH_BACKFILL=0 skips it).
5. Agent memory (bench/memory.py): record creates, and record updates, per second through REST,
   8 clients, in one scope, beside the same raw single-row transactions at 1 connection (a scope's
   journal serialises its appends), and catch-up reads in entries per second with pages of 256
   beside raw keyset pages (LOREBASE_BENCH_MEMORY=0 skips them).
6. Scale-out (bench/scale.py): a second keeper and two gateways over both keepers, as the Helm
   chart runs them; writes and reads again through the two gateways, beside one of each.
7. The change feed (bench/feed.py): commit → SSE delivery latency with 1,000 subscribers through
   the gateway beside raw NATS publish → subscribe, and webhook deliveries per second by Scribe.
8. The agent reads (bench/agent_reads.py), and the analyst questions answered by the reference
   agent without a model (bench/analyst.py: share right, median response bytes per question).
   After the stack has stopped, reads on PostgreSQL standbys (bench/standbys.py): the cluster
   harness's primary with one and two standbys, reads per second and CPU per read of each server.
9. Prints each as a ratio with p50/p99 latencies, and for each measure the CPU milliseconds per
   request of every process (bench/cpu.py: gateway, keeper, feed, scribe, PostgreSQL, NATS, from
   /proc), and appends the results to bench/RESULTS.md. docs/performance.md, "Harness".

LOREBASE_BENCH_CORE=0, LOREBASE_BENCH_SCALE=0, LOREBASE_BENCH_FEED=0, LOREBASE_BENCH_AGENT_READS=0
and LOREBASE_BENCH_ANALYST=0 skip steps 2-4, 6, 7, 8 (agent reads) and the analyst questions;
LOREBASE_BENCH_WRITES_READS=0 keeps only the imports of steps 2-4 (LOREBASE_BENCH_BACKFILL=0 their
backfill too);
LOREBASE_BENCH_STANDBYS=0 skips the reads on standbys;
LOREBASE_BENCH_BIG_RECORDS=0 skips `big` with the cold reads and the agent reads. Targets: issue 17.
LOREBASE_BENCH_PG_SETTINGS (`name=value,...`) sets PostgreSQL server settings over the embedded
server's defaults, for an A/B of them (bench/stack.py).
LOREBASE_BENCH_TRACING=1 runs the stack with tracing on at ratio 1 (LOREBASE_BENCH_TRACING_RATIO
sets another), exporting to a receiver that drops the spans (bench/otlp_sink.py): the cost of
tracing (docs/observability.md, Cost).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
from lorebase_scribe import statistics as scribe_statistics

from bench import agent_reads, analyst, big_backfill, cpu, feed, reads, scale, stack, standbys, write_tail
from bench import memory as memory_bench
from bench.imports import BACKFILL, IMPORT_RECORDS, raw_backfill, raw_copy, rest_backfill, rest_import
from bench.report import Measure, Row, machine, median_pair, pair, table_lines
from lorebase_store import Database

ROOT = Path(__file__).resolve().parent.parent
# LOREBASE_BENCH_RESULTS: another file to append to (an A/B run that should not land in RESULTS.md).
RESULTS = Path(os.environ.get("LOREBASE_BENCH_RESULTS", ROOT / "bench" / "RESULTS.md"))
ADMIN_KEY = stack.ADMIN_KEY
DURATION_S = int(os.environ.get("LOREBASE_BENCH_SECONDS", "6"))
ROUNDS = int(os.environ.get("LOREBASE_BENCH_ROUNDS", "3"))
CORE = os.environ.get("LOREBASE_BENCH_CORE", "1") != "0"
WRITES_READS = os.environ.get("LOREBASE_BENCH_WRITES_READS", "1") != "0"
SCALE = os.environ.get("LOREBASE_BENCH_SCALE", "1") != "0"
TRACING = os.environ.get("LOREBASE_BENCH_TRACING", "0") != "0"
TRACING_RATIO = os.environ.get("LOREBASE_BENCH_TRACING_RATIO", "1")
FEED = os.environ.get("LOREBASE_BENCH_FEED", "1") != "0"
AGENT_READS = os.environ.get("LOREBASE_BENCH_AGENT_READS", "1") != "0"
ANALYST = os.environ.get("LOREBASE_BENCH_ANALYST", "1") != "0"
# Issue 17: CPU per cold read summed over all processes.
COLD_CPU_TARGET_MS = 0.40
# Issue 29: Operation executes at 8 clients on one branch, against raw writes; p99 over p50.
WRITE_TARGET = 0.35
IMPORT_TARGET = 0.45  # of raw COPY, with the smaller stored form
RECORD = stack.RECORD

WRITE_LUA = """
counter = 0
request = function()
  counter = counter + 1
  local id = 1001 + (counter % 30)
  local body = string.format('{"parameters": {"key": "S-%d", "risk_score": %d}}', id, counter % 101)
  return wrk.format("POST", "/api/v1/domains/supply/operations/update_supplier/execute",
    {["Content-Type"]="application/json", ["Authorization"]="Bearer KEY"}, body)
end
done = function(summary, latency, requests)
  io.write(string.format("STATUS errors=%d\\n", summary.errors.status))
end
"""


def _latency(out: str, p: str) -> float:
    match = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def wrk(
    url: str,
    *,
    script: str | None = None,
    headers: dict[str, str] | None = None,
    connections: int = 8,
    threads: int = 2,
    urls: list[str] | None = None,
) -> Measure:
    """wrk for DURATION_S against `url` (or against each of `urls` at once, the clients split
    between them), with the CPU per request of each process (bench/cpu.py)."""
    targets = urls or [url]
    args = ["wrk", f"-t{max(1, threads // len(targets))}", f"-c{max(1, connections // len(targets))}"]
    args += [f"-d{DURATION_S}s", "--latency"]
    for name, value in (headers or {}).items():
        args += ["-H", f"{name}: {value}"]
    if script:
        args += ["-s", script]

    def run() -> list[str]:
        started = [subprocess.Popen([*args, target], stdout=subprocess.PIPE, text=True) for target in targets]
        outs = [process.communicate()[0] for process in started]
        for process in started:
            if process.returncode:
                raise subprocess.CalledProcessError(process.returncode, args)
        return outs

    def total(pattern: str, outs: list[str]) -> float:
        return sum(float(m.group(1)) for out in outs if (m := re.search(pattern, out)))

    outs, usage = cpu.measured(run, lambda outs: int(total(r"(\d+) requests in", outs)))
    rate = total(r"Requests/sec:\s+([\d.]+)", outs)
    errors = int(total(r"Non-2xx or 3xx responses: (\d+)", outs))
    p50 = statistics.mean(_latency(out, "50") for out in outs)
    return Measure("", rate, p50, max(_latency(out, "99") for out in outs), errors, usage)


async def raw_writes(url: str) -> Measure:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY, v text NOT NULL)")
        assert await conn.fetchval("SHOW synchronous_commit") == "on"
        latencies = []
        before = cpu.begin()
        started = time.perf_counter()
        while time.perf_counter() - started < DURATION_S:
            t0 = time.perf_counter()
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO bench_raw (v) VALUES ($1)", "x")
            await conn.execute("COMMIT")
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, len(latencies))
    finally:
        await conn.close()
    quantiles = statistics.quantiles(latencies, n=100)
    return Measure("", len(latencies) / elapsed, quantiles[49] * 1000, quantiles[98] * 1000, cpu=usage)


@dataclass
class Bench:
    """What the steps share: the stack's URLs, the scripts, the generated Domain."""

    base: str
    headers: dict[str, str]
    url: str
    server: str
    work: Path
    big: agent_reads.Big | None = None
    cold_script: Path | None = None

    def pgbench(self, sql: str) -> Measure:
        pg_port = int(self.server.rsplit(":", 1)[1].split("/")[0])
        password = urlsplit(self.server).password or ""
        return reads.pgbench(  # type: ignore[no-any-return]
            sql,
            host="127.0.0.1",
            port=pg_port,
            database="bench",
            password=password,
            duration_s=DURATION_S,
            measure=Measure,
        )


def core(bench: Bench) -> tuple[list[Row], list[str]]:
    """Writes, cold and repeated reads (ROUNDS back-to-back pairs each) and the import
    (LOREBASE_BENCH_WRITES_READS=0: the import only)."""
    rows, lines = _writes_reads(bench) if WRITES_READS else ([], [])
    return rows + _imports(bench), lines


def _writes_reads(bench: Bench) -> tuple[list[Row], list[str]]:
    write_script = bench.work / "write.lua"
    write_script.write_text(WRITE_LUA.replace("KEY", ADMIN_KEY))
    supply_id = asyncio.run(_domain_id(bench.url, "supply"))
    writes, repeated, stale, cold = [], [], [], []
    cold_sql = None
    if bench.big is not None:
        cold_sql = reads.cold_sql(bench.big, asyncio.run(_domain_id(bench.url, "big")))
    tails: list[tuple[Measure, write_tail.Waits]] = []
    for _ in range(ROUNDS):
        with write_tail.waits(bench.url) as waits:
            ours = wrk(bench.base, script=str(write_script))
        tails.append((ours, waits))
        writes.append((ours, asyncio.run(raw_writes(bench.url))))
        if bench.cold_script is not None and cold_sql is not None:
            cold.append((wrk(bench.base, script=str(bench.cold_script)), bench.pgbench(cold_sql)))
        repeated.append(
            (wrk(bench.base + RECORD, headers=bench.headers), bench.pgbench(reads.repeated_sql(supply_id)))
        )
        stale.append((wrk(bench.base + RECORD, headers={**bench.headers, **reads.STALE}), repeated[-1][1]))
    rows: list[Row] = [
        (
            "writes: Operation executes/s, REST, 8 clients, one branch",
            *pair(median_pair(writes), "raw asyncpg BEGIN;INSERT;COMMIT at 1 connection"),
            WRITE_TARGET,
        )
    ]
    spread = _spread_writes(bench)
    rows.append(
        (
            f"writes: Operation executes/s, REST, 8 clients on {write_tail.BRANCHES} branches",
            *pair(median_pair(spread), "raw asyncpg BEGIN;INSERT;COMMIT at 1 connection"),
            None,
        )
    )
    lines = write_tail.tail_lines(tails, [raw for _, raw in writes])
    spread_names = [f"w{n}" for n in range(1, write_tail.BRANCHES + 1)]
    one = asyncio.run(write_tail.revisions_per_transaction(bench.url, ["main"]))
    many = asyncio.run(write_tail.revisions_per_transaction(bench.url, spread_names))
    lines.insert(
        -1,
        f"- Revisions per commit transaction: {one:.2f} on one branch, {many:.2f} on "
        f"{write_tail.BRANCHES} branches",
    )
    if cold and bench.big is not None:
        rows.append(
            (
                f"reads, cold: Record GETs/s of random keys over {bench.big.total} Records, REST, 8 clients",
                *pair(
                    median_pair(cold),
                    "raw point SELECTs of random keys over the same rows at 8 connections (pgbench)",
                ),
                0.04,
            )
        )
    rows.append(
        (
            "reads, repeated: GETs/s of one Record (same request, head not moving), REST, 8 clients",
            *pair(median_pair(repeated), "raw point SELECTs of 30 keys at 8 connections (pgbench)"),
            0.15,
        )
    )
    rows.append(
        (
            "reads, repeated with max-stale: the same GETs opting into staleness (gateway cache), 8 clients",
            *pair(median_pair(stale), "the same raw point SELECTs (the runs above)"),
            0.15,
        )
    )
    return rows, lines


def _imports(bench: Bench) -> list[Row]:
    rows: list[Row] = []
    loads = []
    for index in range(ROUNDS):
        import_rate, import_s, import_cpu = rest_import(
            bench.base, bench.headers, IMPORT_RECORDS, f"bulk{index}"
        )
        # The import's ANALYZE and index merge run after its answer (planner_statistics): the raw
        # COPY waits for them rather than share the cores with them.
        asyncio.run(_analyzed(bench.url))
        copy_rate, copy_s, copy_cpu = asyncio.run(raw_copy(bench.url, IMPORT_RECORDS))
        loads.append(
            (
                Measure(f"{import_s:.2f} s", import_rate, float("nan"), float("nan"), cpu=import_cpu),
                Measure(f"{copy_s:.2f} s", copy_rate, float("nan"), float("nan"), cpu=copy_cpu),
            )
        )
    ours, raw = median_pair(loads)
    rows.append(
        (
            f"imports: Records/s, {IMPORT_RECORDS} in one import through REST ({ours.name})",
            ours,
            f"raw COPY of as many rows into a table shaped like records, same indexes ({raw.name})",
            raw,
            IMPORT_TARGET,
        )
    )
    if BACKFILL:  # once: each round's import left a Domain of IMPORT_RECORDS Items and bench_copy its rows
        fill_rate, fill_s, fill_cpu = rest_backfill(bench.base, bench.headers, IMPORT_RECORDS, "bulk0")
        update_rate, update_s, update_cpu = asyncio.run(raw_backfill(bench.url, IMPORT_RECORDS))
        rows.append(
            (
                f"schema backfill: Records/s, a change set adding an Attribute with a backfill "
                f"expression over {IMPORT_RECORDS} Records, one Revision ({fill_s:.2f} s)",
                Measure(f"{fill_s:.2f} s", fill_rate, float("nan"), float("nan"), cpu=fill_cpu),
                f"raw UPDATE of as many rows adding the same member ({update_s:.2f} s)",
                Measure(f"{update_s:.2f} s", update_rate, float("nan"), float("nan"), cpu=update_cpu),
                None,
            )
        )
    return rows


_ANALYZING = """SELECT count(*) FROM pg_stat_activity
WHERE state = 'active' AND (query ILIKE 'ANALYZE%' OR query ILIKE '%gin_clean_pending_list%')
  AND pid <> pg_backend_pid()"""


async def _analyzed(url: str, timeout_s: float = 30) -> None:
    """Wait (at most `timeout_s`) until no backend runs an ANALYZE or merges pending index entries
    (what an import starts after its answer: lorebase_keeper/writes/planner_statistics.py)."""
    conn = await asyncpg.connect(url)
    try:
        deadline = time.monotonic() + timeout_s
        await asyncio.sleep(0.5)  # the refresh starts right after the answer
        while time.monotonic() < deadline:
            if not await conn.fetchval(_ANALYZING):
                return
            await asyncio.sleep(0.2)
    finally:
        await conn.close()


def _spread_writes(bench: Bench) -> list[tuple[Measure, Measure]]:
    """The writes again, spread over 8 branches of supply (ROUNDS pairs beside raw writes)."""
    write_tail.branches(bench.base, bench.headers)
    script = bench.work / "branches.lua"
    script.write_text(write_tail.BRANCHES_LUA.replace("KEY", ADMIN_KEY))
    return [(wrk(bench.base, script=str(script)), asyncio.run(raw_writes(bench.url))) for _ in range(ROUNDS)]


def scale_out(bench: Bench, meter: cpu.Meter, one: list[Row]) -> list[Row]:
    """Writes and reads through two gateways over two keepers, beside one of each (from `one`)."""
    singles = {name.split(":")[0]: ours for name, ours, *_ in one}
    write_script = bench.work / "write.lua"
    rows: list[Row] = []
    with scale.replicas(meter, bench.work, bench.headers) as out:
        measures = [("writes", lambda: wrk("", script=str(write_script), urls=out.gateways))]
        if bench.cold_script is not None:
            cold = str(bench.cold_script)
            measures.append(("reads, cold", lambda: wrk("", script=cold, urls=out.gateways)))
        repeated = [gateway + RECORD for gateway in out.gateways]
        measures.append(("reads, repeated", lambda: wrk("", headers=bench.headers, urls=repeated)))
        for name, run in measures:
            if name not in singles:
                continue
            runs = sorted((run() for _ in range(ROUNDS)), key=lambda m: m.per_s)
            rows.append(
                (
                    f"scale-out {name}: 2 gateways over 2 keepers, 8 clients split between them",
                    runs[len(runs) // 2],
                    f"{name}: 1 gateway, 1 keeper (above)",
                    singles[name],
                    None,
                )
            )
    return rows


def main() -> int:
    global LOAD_AT_START
    LOAD_AT_START = os.getloadavg()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (apt-get install wrk); `make bench` installs it")
    work = Path(tempfile.mkdtemp(prefix="lorebase-bench-"))
    rows: list[Row] = []
    lines: list[str] = []
    cpu_rows: list[tuple[str, cpu.Usage | None, str]] = []
    try:
        with stack.started(work, tracing_ratio=TRACING_RATIO if TRACING else None) as up:
            rows, lines, cpu_rows, feed_lines, agent_lines = _steps(up, work)
        # After the stack has stopped: the cluster harness's PostgreSQL topology of its own.
        agent_lines += standbys.run(wrk, ROUNDS)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    traced = f", tracing on at ratio {TRACING_RATIO} (exported)" if TRACING else ""
    lines = [f"## {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on {machine()}{traced}", "", *lines]
    lines += feed_lines + agent_lines + [""] + cpu.table(cpu_rows)
    text = "\n".join(lines) + "\n"
    print(text)
    if not RESULTS.exists():
        RESULTS.write_text("# Benchmark results\n\nAppended by `make bench` (bench/run.py); newest last.\n\n")
    with RESULTS.open("a") as handle:
        handle.write(text + "\n")
    return 0


def _steps(
    up: stack.Stack, work: Path
) -> tuple[list[Row], list[str], list[tuple[str, cpu.Usage | None, str]], list[str], list[str]]:
    """Every step on the started stack: the rows of the ratio tables, the lines under them, the CPU
    rows, the feed's and the agent reads' lines."""
    base, headers, url, server, meter = up.base, up.headers, up.url, up.server, up.meter
    rows: list[Row] = []
    lines: list[str] = []
    cpu_rows: list[tuple[str, cpu.Usage | None, str]] = []
    # The analyst questions first, while supply is as `--example supply` left it (the write
    # measures below change its risk scores).
    analyst_lines = analyst.measure(base, headers) if ANALYST else []
    bench = Bench(base, headers, url, server, work)
    if (CORE or AGENT_READS or big_backfill.ENABLED) and agent_reads.BIG_RECORDS > 0:
        bench.big = agent_reads.load(base, headers)
        asyncio.run(_settle(url))
        bench.cold_script = reads.cold_script(bench.big, work, ADMIN_KEY)
    # This machine's speed drifts from minute to minute: each pair (ours, raw) is measured back
    # to back, ROUNDS times, and the median pair by ratio is reported.
    if CORE:
        core_rows, core_lines = core(bench)
        rows += core_rows
        lines += core_lines
    if memory_bench.ENABLED:
        memory_rows, memory_lines = memory_bench.measure(
            base,
            headers,
            url,
            work,
            rounds=ROUNDS,
            duration_s=DURATION_S,
            wrk=wrk,
            raw_writes=raw_writes,
            median_pair=median_pair,
            measure_type=Measure,
        )
        rows += memory_rows
        lines += memory_lines
    scale_rows = scale_out(bench, meter, rows) if CORE and SCALE else []
    cpu_rows += _cpu_rows(rows) + _cpu_rows(scale_rows)
    table = [*header_lines(), *table_lines(rows), ""] if rows else []
    if scale_rows:
        table += [*table_lines(scale_rows, "two replicas / one"), ""]
    lines = table + lines
    feed_lines: list[str] = []
    if FEED:
        feed_lines, feed_cpu = feed.measure(base, ADMIN_KEY, up.nats_url)
        cpu_rows += feed_cpu
    agent_lines: list[str] = []
    if AGENT_READS and bench.big is not None:
        agent_lines, agent_cpu = agent_reads.measure(base, headers, bench.big)
        cpu_rows += agent_cpu
    if big_backfill.ENABLED and bench.big is not None:  # last: it changes big's schema
        agent_lines += big_backfill.measure(base, headers, url, bench.big, up.log)
    agent_lines = analyst_lines + agent_lines
    return rows, lines, cpu_rows, feed_lines, agent_lines


async def _settle(url: str) -> None:
    """VACUUM (ANALYZE) the database after the bulk load, as an operator does after one: the reads
    are then measured in the steady state, not beside autovacuum's first passes over a million new
    rows (minutes of PostgreSQL CPU on this 2-core machine). Then a CHECKPOINT: the load wrote
    gigabytes of WAL, and the checkpoints it forces otherwise run through the next measures (the
    write tail of issue 29: commits waiting on a WAL flush beside a checkpoint's writes). Last, the
    coverage statistics Scribe recounts every `scribe.statistics.interval_s` (300 s): without them,
    query and resolve count a Kind's Records for their coverage block at every new head, the state
    of the first minutes after a bulk load only (a million Records: 75-94 ms of PostgreSQL CPU per
    resolve under writes, bench/RESULTS.md 16:33)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("VACUUM (ANALYZE)")
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()
    db = Database.connect(url, pool_size=1)
    try:
        await scribe_statistics.recount(db)
    finally:
        await db.close()


def _cpu_rows(rows: list[Row]) -> list[tuple[str, cpu.Usage | None, str]]:
    """Each measure's CPU row with its ratio, then its baseline's (where it has one)."""
    out: list[tuple[str, cpu.Usage | None, str]] = []
    for name, ours, base_name, raw, _target in rows:
        ratio = f"{ours.per_s / raw.per_s:.3f}x"
        if name.startswith("reads, cold") and ours.cpu is not None:
            met = "met" if ours.cpu.total_s * 1000 <= COLD_CPU_TARGET_MS else "missed"
            ratio += f"; target total <= {COLD_CPU_TARGET_MS:.2f} ms ({met})"
        out.append((name, ours.cpu, ratio))
        if not name.startswith("scale-out"):
            out.append((f"baseline: {base_name}", raw.cpu, "-"))
    return out


def header_lines() -> list[str]:
    return [
        f"{DURATION_S} s per measurement, median of {ROUNDS} back-to-back pairs by ratio; `make bench`; "
        f"load average {LOAD_AT_START[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end.",
        "",
    ]


LOAD_AT_START = (0.0, 0.0, 0.0)


async def _domain_id(url: str, name: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT id FROM domains WHERE name = $1", name))
    finally:
        await conn.close()


if __name__ == "__main__":
    sys.exit(main())
