"""Context packs over a Domain with the fan-out of 10,000,000 Records (issue 29, item 6), at a size
that loads in minutes: 10 Parts per Supplier and 99 PurchaseOrders per Part (the generator's shape
at 10M; at 1M a Part has ~9), so a depth-2 pack from a Supplier reaches ~990 far neighbours and
is cut by max_neighbors (200) and max_links (500).

`python -m bench.fanout_packs SUPPLIERS SYNC_DIR NAME ROUNDS`: starts a stack of this checkout's
code, loads SUPPLIERS Suppliers (x 1,000 Records), settles it, then for each round waits for
SYNC_DIR/go-NAME-ROUND, measures 200 cold packs (depth 2, 1,500 tokens; p50/p95 and CPU per pack
of each process) and writes SYNC_DIR/done-NAME-ROUND. Two checkouts (main and a branch) run beside
each other with their rounds interleaved by a driver: an A/B in the same sitting.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import agent_reads, cpu, run, stack

CHUNK = 20_000
PARTS_PER_SUPPLIER = 10
# 9 gives the generator's shape at 1M Records, for comparison.
ORDERS_PER_PART = int(os.environ.get("LOREBASE_BENCH_FANOUT_ORDERS", "99"))


def load(base: str, headers: dict[str, str], suppliers: int) -> int:
    schema = agent_reads.parse_yaml((agent_reads.ROOT / "examples" / "supply" / "schema.yaml").read_text())
    parts = suppliers * PARTS_PER_SUPPLIER
    orders = parts * ORDERS_PER_PART
    with httpx.Client(base_url=base, timeout=600) as client:
        created = client.post("/api/v1/domains", json={"name": "big", "schema": schema}, headers=headers)
        assert created.status_code == 201, created.text
        agent_reads._send(client, headers, [agent_reads._supplier(i) for i in range(suppliers)], [])
        agent_reads._send(
            client,
            headers,
            [agent_reads._part(i) for i in range(parts)],
            [agent_reads._supplied_by(i, suppliers) for i in range(parts)],
        )
        for start in range(0, orders, CHUNK):
            chunk = range(start, min(orders, start + CHUNK))
            links: list[dict[str, object]] = [
                {"relation": "for_part", "from": f"PO-{i:06d}", "to": f"P-{i % parts:05d}"} for i in chunk
            ]
            agent_reads._send(client, headers, [agent_reads._order(i, 6) for i in chunk], links)
    return suppliers + parts + orders


def main() -> None:
    suppliers, sync, name, rounds = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    work = Path(tempfile.mkdtemp(prefix=f"fanout-{name}-"))
    with stack.started(work) as up:
        records = load(up.base, up.headers, suppliers)
        asyncio.run(run._settle(up.url))
        client = httpx.Client(base_url=up.base, timeout=600)
        print(f"{name}: {records} Records loaded and settled", flush=True)

        def packs(offset: int) -> list[float]:
            took = []
            for i in range(200):  # a different budget per request: each pack is read cold
                body = {
                    "refs": [f"Supplier/S-{(i * 37 + offset) % suppliers:04d}"],
                    "depth": 2,
                    "budget_tokens": 1500 + offset + i,
                }
                started = time.perf_counter()
                answer = client.post("/api/v1/domains/big/context", json=body, headers=up.headers)
                took.append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200, answer.text[:300]
            return took

        packs(10_000)  # warm-up
        for r in range(rounds):
            while not (sync / f"go-{name}-{r}").exists():
                time.sleep(0.5)
            took, usage = cpu.measured(functools.partial(packs, r * 1000), len)
            p50, p95 = agent_reads._pct(took)
            roles = (
                " / ".join(f"{role} {usage.ms(role):.2f}" for role in sorted(usage.per_request_s))
                if usage
                else ""
            )
            line = f"{name} round {r}: p50 {p50:.1f} p95 {p95:.1f} ms; CPU per pack {roles}; total {usage.total_s * 1000 if usage else 0:.2f} ms"
            print(line, flush=True)
            (sync / f"done-{name}-{r}").write_text(line + "\n")


if __name__ == "__main__":
    main()
