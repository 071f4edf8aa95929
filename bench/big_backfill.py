"""The large-migration measure of `make bench` (issue 30): one schema change set backfilling an
Attribute on every Record of the generated Domain `big` (Suppliers, Parts and PurchaseOrders: a
million by default), beside a raw UPDATE of as many rows of `records`, and the agent reads (context
packs and resolve, p50/p95, 1 client, as bench/agent_reads.py) measured while it runs beside the
same reads without it and during the raw UPDATE (what PostgreSQL alone rewriting as many rows does
to them: the baseline of "reads keep their p95"). Meanwhile a writer commits an Operation on another Supplier every 0.2 s: how
many landed, their latency, and the longest wait of any (a write queued behind the change set's
commit waits for it, then is refused: prepared under the old schema). LOREBASE_BENCH_BIG_BACKFILL=0 skips it (docs/schema.md, "Large migrations").

Per phase (keeper's log lines say when each began: migrating, staging the rows, the branch's lock
taken, committed; then the answer, and AFTER more reads of each after it, when reads bring their
caches to the new head): the reads' p50/p95/largest, keeper's event-loop lag (each wake-up of its
probe later than `services.loop_lag_ms`, logged: how many, their sum as a share of the phase, the
largest), and the CPU of keeper and PostgreSQL in cores (CPU seconds over the phase's seconds,
from /proc every 0.5 s). Lag and CPU depend less on what else loads the machine than latencies do.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import asyncpg
import httpx
import orjson

from bench import agent_reads, cpu

ENABLED = os.environ.get("LOREBASE_BENCH_BIG_BACKFILL", "1") != "0"
READS = 200  # of each, without the backfill
AFTER = 100  # of each, after the answer
# Keeper's log lines that start each phase (schema_changes/change/, staged/).
MARKS = (
    ("migrating", re.compile(r"schema change on main: migrating")),
    ("staging rows", re.compile(r"schema change: \d+ changes migrated and checked")),
    ("commit hold", re.compile(r"schema change on main: the branch's lock taken")),
    ("until the answer", re.compile(r"schema change on main: committed")),
)
LAG = re.compile(r"event loop held ([0-9.]+) ms(?: \(([0-9.]+) ms on CPU\))?")


def _band(kind: str, expression: str, values: list[str]) -> dict[str, object]:
    return {
        "op": "add_attribute",
        "kind": kind,
        "attribute": "band",
        "definition": {"type": "enum", "values": values},
        "backfill": {"expression": expression},
    }


CHANGES = [
    _band("Supplier", "'high' if risk_score >= 50 else 'low'", ["low", "high"]),
    _band("Part", "'dear' if unit_cost >= 100 else 'cheap'", ["cheap", "dear"]),
    _band("PurchaseOrder", "'large' if quantity >= 25 else 'small'", ["small", "large"]),
]
RAW = """UPDATE records SET "values" = "values" || jsonb_build_object('band', CASE kind
  WHEN 'Supplier' THEN CASE WHEN ("values"->>'risk_score')::int >= 50 THEN 'high' ELSE 'low' END
  WHEN 'Part' THEN CASE WHEN ("values"->>'unit_cost')::numeric >= 100 THEN 'dear' ELSE 'cheap' END
  ELSE CASE WHEN ("values"->>'quantity')::int >= 25 THEN 'large' ELSE 'small' END END)
WHERE domain_id = $1 AND branch = 'main' AND kind IN ('Supplier', 'Part', 'PurchaseOrder')"""


def _timed(client: httpx.Client, path: str, headers: dict[str, str], body: object) -> float | None:
    """Milliseconds of one read; None when it did not answer 200 (a deadline passed)."""
    started = time.perf_counter()
    answer = client.post(path, json=body, headers=headers)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed if answer.status_code == 200 else None


Read = tuple[float, float | None, float | None]  # started (epoch seconds), pack ms, resolve ms


def _reads(client: httpx.Client, headers: dict[str, str], big: agent_reads.Big, i: int) -> Read:
    """One context pack and one resolve (the agent reads' requests): when they started, their
    milliseconds."""
    at = time.time()
    pack = _timed(
        client,
        "/api/v1/domains/big/context",
        headers,
        {
            "refs": [f"Supplier/S-{(i * 37) % max(1, big.suppliers // 2):04d}"],
            "depth": 2,
            "budget_tokens": 1500,
        },
    )
    resolve = _timed(
        client,
        "/api/v1/domains/big/resolve",
        headers,
        {"text": agent_reads.RESOLVE_TEXTS[i % len(agent_reads.RESOLVE_TEXTS)], "record_misses": False},
    )
    return at, pack, resolve


def _pct(samples: Sequence[float | None]) -> str:
    answered = [s for s in samples if s is not None]
    failed = len(samples) - len(answered)
    if not answered:
        return f"none answered ({failed} failed)"
    p50, p95 = agent_reads._pct(answered)
    return f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, largest {max(answered):.0f} ms" + (
        f", {failed} not answered (503: keeper's deadline)" if failed else ""
    )


def measure(
    base: str, headers: dict[str, str], url: str, big: agent_reads.Big, log: Path | None = None
) -> list[str]:
    """The lines of the large-migration measure (`log`: the stack's log, for the phases)."""
    offset = log.stat().st_size if log is not None and log.exists() else 0
    samples: list[tuple[float, dict[str, int]]] = []  # (epoch seconds, CPU ticks by role)
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set() and cpu.METER is not None:
            samples.append((time.time(), cpu.METER.snapshot()))
            sampling.wait(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    with httpx.Client(base_url=base, timeout=3600) as client:
        quiet = [_reads(client, headers, big, i) for i in range(READS)]
        load_quiet = os.getloadavg()[0]
        answer: dict[str, object] = {}
        writes: list[tuple[float, int]] = []
        stop = threading.Event()

        def backfill() -> None:
            """As a job (Prefer: respond-async), polled every second as `lorebase schema apply`
            does: no request outlives the gateway's deadline, however long the migration."""
            started = time.perf_counter()
            with httpx.Client(base_url=base, timeout=600) as own:
                response = own.post(
                    "/api/v1/domains/big/branches/main/schema/changes",
                    json={"changes": CHANGES, "message": "Band every Record"},
                    headers={**headers, "Prefer": "respond-async"},
                )
                answer.update(accepted_ms=(time.perf_counter() - started) * 1000)
                job = response.json() if response.status_code == 202 else {}
                while job.get("status") == "running":
                    time.sleep(1)
                    polled = own.get(response.headers["Location"], headers=headers)
                    if polled.status_code != 503:  # unavailable for a moment: poll again
                        job = polled.json()
            answer.update(
                elapsed=time.perf_counter() - started,
                status=200 if job.get("status") == "committed" else response.status_code,
                body=orjson.dumps(job.get("result") or job.get("problem")).decode() if job else response.text,
            )
            stop.set()

        def writer() -> None:
            with httpx.Client(base_url=base, timeout=600) as own:
                i = 0
                while not stop.is_set():
                    started = time.perf_counter()
                    status = own.post(
                        "/api/v1/domains/big/operations/update_supplier/execute",
                        json={
                            "parameters": {
                                "key": f"S-{big.suppliers // 2 + i % (big.suppliers // 2):04d}",
                                "risk_score": i % 101,
                            }
                        },
                        headers=headers,
                    ).status_code
                    writes.append(((time.perf_counter() - started) * 1000, status))
                    i += 1
                    stop.wait(0.2)

        threads = [threading.Thread(target=backfill), threading.Thread(target=writer)]
        sampler.start()
        for thread in threads:
            thread.start()
        during: list[Read] = []
        load_during = 0.0
        while not stop.is_set():
            during.append(_reads(client, headers, big, len(during) + 7919))
            load_during = max(load_during, os.getloadavg()[0])
        answered = time.time()
        for thread in threads:
            thread.join()
        after = [_reads(client, headers, big, i + 104729) for i in range(AFTER)]
        sampling.set()
        sampler.join()
        # The raw baseline, with the same reads beside it: what the rewrite of as many rows by
        # PostgreSQL alone does to them.
        raw: dict[str, float] = {}
        rewriting = threading.Thread(target=lambda: raw.update(s=_raw_update(url)))
        rewriting.start()
        during_raw: list[Read] = []
        while rewriting.is_alive():
            during_raw.append(_reads(client, headers, big, len(during_raw) + 15485863))
        rewriting.join()
    assert answer["status"] == 200, str(answer["body"])[:500]
    body = orjson.loads(str(answer["body"]))
    migrated = int(body["migrated"]["records"])
    elapsed = float(answer["elapsed"])  # type: ignore[arg-type]
    accepted_ms = float(answer["accepted_ms"])  # type: ignore[arg-type]
    raw_s = raw["s"]
    landed = [ms for ms, status in writes if status == 200]
    refused = len(writes) - len(landed)
    return [
        "large migration (issue 30): one change set adding `band` with a backfill to every Supplier, Part "
        "and PurchaseOrder of `big`, in batches of keeper.schema_changes.batch_records outside the "
        "branch's commit lock, then one Revision:",
        f"- backfill of {migrated} Records, as a job (202 in {accepted_ms:.0f} ms, then polled): {elapsed:.1f} s ({migrated / elapsed:,.0f} Records/s); raw UPDATE of "
        f"as many `records` rows in one statement: {raw_s:.1f} s ({migrated / raw_s:,.0f} rows/s); "
        f"ours/raw {raw_s / elapsed:.3f}x",
        f"- agent reads, 1 client, without the backfill ({READS} of each, load average {load_quiet:.2f}): "
        f"context pack {_pct([p for _, p, _ in quiet])}; resolve {_pct([r for _, _, r in quiet])}",
        f"- the same during the backfill ({len(during)} of each, load average up to {load_during:.2f}): "
        f"context pack {_pct([p for _, p, _ in during])}; resolve {_pct([r for _, _, r in during])}",
        f"- the same during the raw UPDATE ({len(during_raw)} of each): context pack "
        f"{_pct([p for _, p, _ in during_raw])}; resolve {_pct([r for _, _, r in during_raw])}",
        "- reads' p95 over their quiet p95 (context pack / resolve): during the backfill "
        f"{_slower(during, quiet)}, during the raw UPDATE {_slower(during_raw, quiet)}",
        f"- an update_supplier every 0.2 s meanwhile: {len(landed)} committed"
        + (f", {refused} refused (prepared under the old schema: 409 schema-changed)" if refused else "")
        + (f"; latency of those committed {_pct(landed)}" if landed else "")
        + (
            f"; the longest of all, refused ones too (about the commit's hold on the branch): "
            f"{max(ms for ms, _ in writes):.0f} ms"
            if writes
            else ""
        ),
        *_phases(log, offset, quiet, during + after, answered, samples),
    ]


def _phases(
    log: Path | None,
    offset: int,
    quiet: list[Read],
    reads: list[Read],
    answered: float,
    samples: list[tuple[float, dict[str, int]]],
) -> list[str]:
    """The per-phase table (see the module's docstring); none without the stack's log."""
    if log is None or not log.exists():
        return []
    starts: dict[str, float] = {}
    lags: list[tuple[float, float, float]] = []  # (epoch seconds, ms late, ms on CPU meanwhile)
    with log.open("rb") as handle:
        handle.seek(offset)
        for raw in handle:
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if line.get("service") != "keeper":
                continue
            at = datetime.fromisoformat(str(line["ts"]).replace("Z", "+00:00")).timestamp()
            message = str(line.get("message", ""))
            if found := LAG.search(message):
                lags.append((at, float(found.group(1)), float(found.group(2) or 0)))
                continue
            for name, mark in MARKS:
                if name not in starts and mark.search(message):
                    starts[name] = at
    if len(starts) < len(MARKS):
        return [f"- phases: keeper's log lacks some ({', '.join(sorted(starts))} found)"]
    end = max(at for at, _, _ in reads) if reads else answered
    bounds = [(name, starts[name]) for name, _ in MARKS] + [("after the answer", answered)]
    spans = [
        (name, begin, bounds[index + 1][1] if index + 1 < len(bounds) else end)
        for index, (name, begin) in enumerate(bounds)
    ]
    lines = [
        "",
        "Per phase of the change set (reads by when they started; keeper's event-loop lag: its probe's "
        "wake-ups later than services.loop_lag_ms: how many, their lateness summed as a share of the "
        "phase, the same for the CPU keeper's loop used meanwhile (work on the loop, not a busy machine), "
        "the largest; CPU in cores: CPU seconds over the phase's seconds; the migration process: what "
        "keeper started, its fork server and the change set's process; RSS: VmRSS every 0.5 s):",
        "",
        "| phase | seconds | reads | context pack p50 / p95 / largest ms | resolve p50 / p95 / largest ms "
        "| loop lag: late wake-ups, share late, share on CPU, largest ms | keeper cores | migration process "
        "cores | PostgreSQL cores | keeper / migration process RSS, largest MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    first = min(at for at, _, _ in quiet) if quiet else starts["migrating"]
    spans = [("before (no change set)", first, min(starts["migrating"], first + 3600)), *spans]
    for name, begin, finish in spans:
        inside = [r for r in [*quiet, *reads] if begin <= r[0] < finish]
        late = [(ms, on_cpu) for at, ms, on_cpu in lags if begin <= at < finish]
        seconds = max(finish - begin, 1e-9)
        lag = (
            f"{len(late)}, {sum(ms for ms, _ in late) / 10 / seconds:.1f} %, "
            f"{sum(c for _, c in late) / 10 / seconds:.1f} %, {max(ms for ms, _ in late):.0f}"
            if late
            else "0"
        )
        lines.append(
            f"| {name} | {finish - begin:.1f} | {len(inside)} | {_cells([p for _, p, _ in inside])} "
            f"| {_cells([r for _, _, r in inside])} | {lag} | {_cores(samples, begin, finish, 'keeper')} "
            f"| {_cores(samples, begin, finish, 'migration')} | {_cores(samples, begin, finish, 'postgres')} "
            f"| {_largest(samples, begin, finish, 'keeper_rss_mb')} / "
            f"{_largest(samples, begin, finish, 'migration_rss_mb')} |"
        )
    return [*lines, ""]


def _slower(reads: list[Read], quiet: list[Read]) -> str:
    """The p95 of `reads` over the p95 of `quiet`, context packs / resolve."""

    def ratio(index: int) -> str:
        now = [r[index] for r in reads if r[index] is not None]
        before = [r[index] for r in quiet if r[index] is not None]
        if not now or not before:
            return "-"
        return f"{agent_reads._pct(now)[1] / agent_reads._pct(before)[1]:.2f}x"  # type: ignore[arg-type]

    return f"{ratio(1)} / {ratio(2)}"


def _cells(samples: Sequence[float | None]) -> str:
    answered = [s for s in samples if s is not None]
    if not answered:
        return "-"
    p50, p95 = agent_reads._pct(answered)
    failed = len(samples) - len(answered)
    return f"{p50:.1f} / {p95:.1f} / {max(answered):.0f}" + (f" ({failed} failed)" if failed else "")


def _cores(samples: list[tuple[float, dict[str, int]]], begin: float, finish: float, role: str) -> str:
    """CPU cores `role` used between the samples nearest `begin` and `finish`."""
    inside = [(at, used) for at, used in samples if begin - 0.5 <= at <= finish + 0.5]
    if len(inside) < 2 or inside[-1][0] - inside[0][0] < 0.5:
        return "-"
    (first, before), (last, after) = inside[0], inside[-1]
    return f"{(after[role] - before[role]) * cpu.TICK_S / (last - first):.2f}"


def _largest(samples: list[tuple[float, dict[str, int]]], begin: float, finish: float, key: str) -> str:
    """The largest of `key` (a memory figure) in the samples between `begin` and `finish`."""
    inside = [used.get(key, 0) for at, used in samples if begin <= at <= finish]
    return f"{max(inside):,}" if inside else "-"


def _raw_update(url: str) -> float:
    """Seconds of the raw UPDATE (in a transaction rolled back: `big` keeps what the change set wrote)."""

    async def run() -> float:
        conn = await asyncpg.connect(url)
        try:
            domain_id = await conn.fetchval("SELECT id FROM domains WHERE name = 'big'")
            async with conn.transaction():
                await conn.execute("SET LOCAL statement_timeout = 0")
                started = time.perf_counter()
                await conn.execute(RAW, domain_id)
                elapsed = time.perf_counter() - started
                raise _Rollback(elapsed)
        except _Rollback as done:
            return done.elapsed
        finally:
            await conn.close()

    return asyncio.run(run())


class _Rollback(Exception):
    def __init__(self, elapsed: float) -> None:
        super().__init__("rolled back")
        self.elapsed = elapsed


__all__ = ["ENABLED", "measure"]
