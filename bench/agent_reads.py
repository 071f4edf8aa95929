"""The agent-read figures of `make bench` (issue 3): a generated Domain shaped like supply, loaded by
the import path, then context packs (depth 2, 1,500 tokens) and resolve, p50/p95, and the history and
lineage of one Record at a short and at a long branch history.

Sizes: LOREBASE_BENCH_BIG_RECORDS (default 1,000,000 Records: 10,000 Suppliers, 100,000 Parts, the
rest PurchaseOrders, each with its Links) and LOREBASE_BENCH_BRANCH_REVISIONS (default 100,000).
Each round of packs, resolves and queries (with coverage) runs with writes committing meanwhile on
other Records at each rate of LOREBASE_BENCH_WRITE_RATES (0, 20 and 100 per second; issue 29).
Targets: context pack p95 <= 12 ms and resolve p95 <= 15 ms with writes flowing and without (issues
17, 16, 29), for the analyst questions of issue 16 and, apart, for those of issue 31 (comparatives,
superlatives, counts, states, dates: RESOLVE_31_TEXTS); history/lineage time flat (ratio <= 1.5) as
the branch grows.
"""

from __future__ import annotations

import concurrent.futures
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from bench import cpu, paced_writes
from lorebase.schema import parse_yaml

ROOT = Path(__file__).resolve().parent.parent
BIG_RECORDS = int(os.environ.get("LOREBASE_BENCH_BIG_RECORDS", "1000000"))
BRANCH_REVISIONS = int(os.environ.get("LOREBASE_BENCH_BRANCH_REVISIONS", "100000"))
CHUNK = 100_000
# Questions for resolve at size: every level of issue 16 (names, values, codes, comparisons,
# Record titles and keys, typos, hints), on the generated Domain's words.
RESOLVE_TEXTS = [
    "active seal suppliers in PL",
    "how many suppliers in PL have a risk score above 80",
    "lead time of S-0042",
    "what is the risk score of Supplier 42 GmbH",
    "how many vendors per country",
    "supliers with tier 1 and risk below 25",
    "parts that cost more than 100 EUR",
    "which supplier has the highest risk score",
]
# Questions of issue 31 (comparatives, superlatives and top-k, number words, verbs of state, counts
# of related Records, dates as people say them), timed apart so their cost is seen on its own.
RESOLVE_31_TEXTS = [
    "the three cheapest parts",
    "suppliers riskier than seventy",
    "how many parts does each tier 1 supplier supply",
    "orders placed since Q3",
    "flagged suppliers in PL",
    "contracts not older than 2023",
    "the two suppliers with the most parts",
    "suppliers without risk flags",
]


def _pct(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


@dataclass(frozen=True)
class Big:
    """The generated Domain `big` as loaded: its Records by Kind (numbered in this order by
    bench/reads.py) and how long the imports took. PurchaseOrders are numbered with `order_width`
    digits (PO-000000; 7 past a million of them, bench/big_scale.py)."""

    total: int
    suppliers: int
    parts: int
    orders: int
    load_s: float
    order_width: int = 6


def load(base: str, headers: dict[str, str], total: int = BIG_RECORDS, *, order_width: int = 6) -> Big:
    """Create and load the generated Domain `big` (once per run: the cold reads use it too)."""
    schema = parse_yaml((ROOT / "examples" / "supply" / "schema.yaml").read_text())
    if order_width != 6:  # the example's PurchaseOrder numbers have 6 digits
        number = schema["kinds"]["PurchaseOrder"]["attributes"]["po_number"]
        number["pattern"] = number["pattern"].replace("{6}", f"{{{order_width}}}")
    suppliers = min(10_000, max(1, total // 100))
    parts = min(100_000, max(1, total // 10))
    with httpx.Client(base_url=base, timeout=600) as client:
        created = client.post("/api/v1/domains", json={"name": "big", "schema": schema}, headers=headers)
        assert created.status_code == 201, created.text
        started = time.perf_counter()
        _send(client, headers, [_supplier(i) for i in range(suppliers)], [])
        for start in range(0, parts, CHUNK):
            chunk = range(start, min(parts, start + CHUNK))
            _send(client, headers, [_part(i) for i in chunk], [_supplied_by(i, suppliers) for i in chunk])
    empty = Big(suppliers + parts, suppliers, parts, 0, time.perf_counter() - started, order_width)
    return grow(base, headers, empty, total)


def grow(base: str, headers: dict[str, str], big: Big, total: int) -> Big:
    """Add PurchaseOrders (each `for_part` a Part) to `big` until it holds `total` Records."""
    orders = max(0, total - big.suppliers - big.parts)
    width = big.order_width
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=600) as client:
        for start in range(big.orders, orders, CHUNK):
            chunk = range(start, min(orders, start + CHUNK))
            records = [_order(i, width) for i in chunk]
            links: list[dict[str, object]] = [
                {"relation": "for_part", "from": f"PO-{i:0{width}d}", "to": f"P-{i % big.parts:05d}"}
                for i in chunk
            ]
            _send(client, headers, records, links)
    grown = max(big.orders, orders)
    return Big(
        big.suppliers + big.parts + grown,
        big.suppliers,
        big.parts,
        grown,
        big.load_s + time.perf_counter() - started,
        width,
    )


def _send(
    client: httpx.Client,
    headers: dict[str, str],
    records: list[dict[str, object]],
    links: list[dict[str, object]],
) -> None:
    body = orjson.dumps({"source": "bench", "records": records, "links": links})
    answer = client.post(
        "/api/v1/domains/big/imports", content=body, headers={**headers, "Content-Type": "application/json"}
    )
    assert answer.status_code == 200, answer.text[:300]


def _supplier(i: int) -> dict[str, object]:
    return {
        "kind": "Supplier",
        "values": {
            "supplier_code": f"S-{i:04d}",
            "legal_name": f"Supplier {i} GmbH",
            "country": ["PL", "DE", "CZ", "NL"][i % 4],
            "city": ["Poznan", "Berlin", "Brno", "Delft"][i % 4],
            "risk_score": str(i % 101),
            "status": ["active", "inactive"][i % 7 == 0],
            "tier": str(1 + i % 3),
            "vat_number": f"VAT{i:08d}",
        },
    }


def _part(i: int) -> dict[str, object]:
    return {
        "kind": "Part",
        "values": {
            "part_number": f"P-{i:05d}",
            "name": f"Part {i} seal ring",
            "category": "seal",
            "unit_cost": f"{1 + i % 500}.{i % 100:02d}",
        },
    }


def _supplied_by(i: int, suppliers: int) -> dict[str, object]:
    return {
        "relation": "supplied_by",
        "from": f"P-{i:05d}",
        "to": f"S-{i % suppliers:04d}",
        "values": {"is_primary": True, "lead_time_days": "14"},
    }


def _order(i: int, width: int) -> dict[str, object]:
    return {
        "kind": "PurchaseOrder",
        "values": {
            "po_number": f"PO-{i:0{width}d}",
            "quantity": str(1 + i % 50),
            "ordered_on": "2026-05-01",
            "status": "open",
            "total": "10.00",
        },
    }


def _timed(
    client: httpx.Client, method: str, path: str, headers: dict[str, str], body: object | None = None
) -> float:
    started = time.perf_counter()
    answer = client.request(method, path, json=body, headers=headers)
    elapsed = (time.perf_counter() - started) * 1000
    assert answer.status_code == 200, answer.text[:300]
    return elapsed


def _grow(base: str, headers: dict[str, str], revisions: int) -> None:
    """Commit `revisions` Operations on the chain Domain's main branch, 8 at a time."""

    def worker(offset: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            for i in range(offset, revisions, 8):
                answer = client.post(
                    "/api/v1/domains/chain/operations/update_supplier/execute",
                    json={"parameters": {"key": f"S-{1002 + i % 29}", "risk_score": (i // 29) % 101}},
                    headers=headers,
                )
                assert answer.status_code == 200, answer.text[:300]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))


QUERY = {
    "kind": "Supplier",
    "where": {"attr": "country", "op": "eq", "value": "PL"},
    "select": ["legal_name", "risk_score"],
    "limit": 20,
    "coverage": True,
}
# Writes per second committed meanwhile (issue 29), each rate a round of packs, resolves and queries.
WRITE_RATES = [float(r) for r in os.environ.get("LOREBASE_BENCH_WRITE_RATES", "0,20,100").split(",")]
PACK_TARGET_MS, RESOLVE_TARGET_MS = 12.0, 15.0


def _round(
    client: httpx.Client, base: str, headers: dict[str, str], big: Big, rate: float, offset: int
) -> tuple[list[str], list[tuple[str, cpu.Usage | None, str]]]:
    """200 context packs (each from another Supplier than any round before), resolves and queries
    with `rate` writes per second committing meanwhile."""
    during = "no writes" if not rate else f"{rate:g} writes/s asked"
    with paced_writes.paced(base, headers, rate, suppliers=big.suppliers, parts=big.parts) as writes:
        pack, pack_cpu = cpu.measured(
            lambda: [
                _timed(
                    client,
                    "POST",
                    "/api/v1/domains/big/context",
                    headers,
                    {
                        "refs": [f"Supplier/S-{(offset + i * 37) % max(1, big.suppliers // 2):04d}"],
                        "depth": 2,
                        "budget_tokens": 1500,
                    },
                )
                for i in range(200)
            ],
            len,
        )
        resolve, resolve_cpu = cpu.measured(
            lambda: [
                _timed(
                    client,
                    "POST",
                    "/api/v1/domains/big/resolve",
                    headers,
                    {"text": RESOLVE_TEXTS[i % len(RESOLVE_TEXTS)], "record_misses": False},
                )
                for i in range(200)
            ],
            len,
        )
        graded, graded_cpu = cpu.measured(
            lambda: [
                _timed(
                    client,
                    "POST",
                    "/api/v1/domains/big/resolve",
                    headers,
                    {"text": RESOLVE_31_TEXTS[i % len(RESOLVE_31_TEXTS)], "record_misses": False},
                )
                for i in range(200)
            ],
            len,
        )
        query, query_cpu = cpu.measured(
            lambda: [_timed(client, "POST", "/api/v1/domains/big/query", headers, QUERY) for _ in range(200)],
            len,
        )
    committed = f"{writes.rate():.1f} writes/s committed" + (
        f", {writes.failed} failed" if writes.failed else ""
    )
    if rate:
        during += f" ({committed})"
    lines = [f"- with {during}, load average {os.getloadavg()[0]:.2f}:"]
    rows: list[tuple[str, cpu.Usage | None, str]] = []
    for name, samples, usage, target in (
        ("context pack, depth 2, 1,500 tokens", pack, pack_cpu, PACK_TARGET_MS),
        (f"resolve ({len(RESOLVE_TEXTS)} analyst questions)", resolve, resolve_cpu, RESOLVE_TARGET_MS),
        (
            f"resolve of comparatives, ranks, counts, states, dates ({len(RESOLVE_31_TEXTS)} questions)",
            graded,
            graded_cpu,
            RESOLVE_TARGET_MS,
        ),
        ("query with coverage", query, query_cpu, None),
    ):
        p50, p95 = _pct(samples)
        goal = (
            ""
            if target is None
            else f" (target p95 <= {target:g} ms: {'met' if p95 <= target else 'missed'})"
        )
        lines.append(f"  - {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms{goal}")
        label = name.split(" (")[0].split(",")[0]
        rows.append((f"agent reads: {label}, 1 client, {during.split(' (')[0]}", usage, f"p95 {p95:.1f} ms"))
    return lines, rows


def measure(
    base: str, headers: dict[str, str], big: Big
) -> tuple[list[str], list[tuple[str, cpu.Usage | None, str]]]:
    """The agent-read lines, and the CPU rows (context pack, resolve, query; with writes the CPU of
    the writes is in them too) of the per-process table."""
    lines = []
    cpu_rows: list[tuple[str, cpu.Usage | None, str]] = []
    with httpx.Client(base_url=base, timeout=600) as client:
        lines.append(
            f"agent reads on a generated Domain of {big.total} Records (loaded by import in {big.load_s:.1f} s), "
            "1 client, 200 requests of each, with writes on other Records committing meanwhile "
            "(bench/paced_writes.py):"
        )
        _timed(
            client, "POST", "/api/v1/domains/big/resolve", headers, {"text": "warm", "record_misses": False}
        )
        for index, rate in enumerate(WRITE_RATES):
            round_lines, round_rows = _round(client, base, headers, big, rate, offset=index * 7919)
            lines += round_lines
            cpu_rows += round_rows
        schema = parse_yaml((ROOT / "examples" / "supply" / "schema.yaml").read_text())
        assert (
            client.post(
                "/api/v1/domains", json={"name": "chain", "schema": schema}, headers=headers
            ).status_code
            == 201
        )
        data = orjson.loads((ROOT / "examples" / "supply" / "data.json").read_bytes())
        assert (
            client.post(
                "/api/v1/domains/chain/imports", json={"source": "bench", **data}, headers=headers
            ).status_code
            == 200
        )
        figures = {}
        for label, target in (("short", 10), ("long", BRANCH_REVISIONS)):
            head = client.get("/api/v1/domains/chain/branches/main", headers=headers).json()["generation"]
            if target > head:
                _grow(base, headers, target - head)
            history = [
                _timed(client, "GET", "/api/v1/domains/chain/kinds/Supplier/records/S-1001/history", headers)
                for _ in range(100)
            ]
            lineage = [
                _timed(client, "GET", "/api/v1/domains/chain/kinds/Supplier/records/S-1001/lineage", headers)
                for _ in range(100)
            ]
            figures[label] = (_pct(history)[0], _pct(lineage)[0])
        short, long_ = figures["short"], figures["long"]
        lines.append(
            f"- history of one Record: p50 {short[0]:.1f} ms at 10 branch Revisions, {long_[0]:.1f} ms at {BRANCH_REVISIONS}: "
            f"{long_[0] / short[0]:.2f}x (target <= 1.5x)"
        )
        lines.append(
            f"- lineage of one Record: p50 {short[1]:.1f} ms at 10 branch Revisions, {long_[1]:.1f} ms at {BRANCH_REVISIONS}: "
            f"{long_[1] / short[1]:.2f}x (target <= 1.5x)"
        )
    return lines, cpu_rows


__all__ = ["Big", "grow", "load", "measure"]
