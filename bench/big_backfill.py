"""The large-migration measure of `make bench` (issue 30): one schema change set backfilling an
Attribute on every Record of the generated Domain `big` (Suppliers, Parts and PurchaseOrders: a
million by default), beside a raw UPDATE of as many rows of `records`, and the agent reads (context
packs and resolve, p50/p95, 1 client, as bench/agent_reads.py) measured while it runs beside the
same reads without it. Meanwhile a writer commits an Operation on another Supplier every 0.2 s: how
many landed, their latency, and the longest wait of any (a write queued behind the change set's
commit waits for it, then is refused: prepared under the old schema). LOREBASE_BENCH_BIG_BACKFILL=0 skips it (docs/schema.md, "Large migrations").
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence

import asyncpg
import httpx
import orjson

from bench import agent_reads

ENABLED = os.environ.get("LOREBASE_BENCH_BIG_BACKFILL", "1") != "0"
READS = 200  # of each, without the backfill


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


def _reads(
    client: httpx.Client, headers: dict[str, str], big: agent_reads.Big, i: int
) -> tuple[float | None, float | None]:
    """One context pack and one resolve (the agent reads' requests), their milliseconds."""
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
    return pack, resolve


def _pct(samples: Sequence[float | None]) -> str:
    answered = [s for s in samples if s is not None]
    failed = len(samples) - len(answered)
    if not answered:
        return f"none answered ({failed} failed)"
    p50, p95 = agent_reads._pct(answered)
    return f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, largest {max(answered):.0f} ms" + (
        f", {failed} not answered (503: keeper's deadline)" if failed else ""
    )


def measure(base: str, headers: dict[str, str], url: str, big: agent_reads.Big) -> list[str]:
    """The lines of the large-migration measure."""
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
                    job = own.get(response.headers["Location"], headers=headers).json()
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
        for thread in threads:
            thread.start()
        during: list[tuple[float | None, float | None]] = []
        load_during = 0.0
        while not stop.is_set():
            during.append(_reads(client, headers, big, len(during) + 7919))
            load_during = max(load_during, os.getloadavg()[0])
        for thread in threads:
            thread.join()
    assert answer["status"] == 200, str(answer["body"])[:500]
    body = orjson.loads(str(answer["body"]))
    migrated = int(body["migrated"]["records"])
    elapsed = float(answer["elapsed"])  # type: ignore[arg-type]
    accepted_ms = float(answer["accepted_ms"])  # type: ignore[arg-type]
    raw_s = _raw_update(url)
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
        f"context pack {_pct([p for p, _ in quiet])}; resolve {_pct([r for _, r in quiet])}",
        f"- the same during the backfill ({len(during)} of each, load average up to {load_during:.2f}): "
        f"context pack {_pct([p for p, _ in during])}; resolve {_pct([r for _, r in during])}",
        f"- an update_supplier every 0.2 s meanwhile: {len(landed)} committed"
        + (f", {refused} refused (prepared under the old schema: 409 schema-changed)" if refused else "")
        + (f"; latency of those committed {_pct(landed)}" if landed else "")
        + (
            f"; the longest of all, refused ones too (about the commit's hold on the branch): "
            f"{max(ms for ms, _ in writes):.0f} ms"
            if writes
            else ""
        ),
    ]


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
