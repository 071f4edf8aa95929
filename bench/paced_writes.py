"""Writes at a steady rate while the agent reads are measured (issue 29: agents read and write at
once, and the first resolve after each commit used to rebuild its vocabulary).

`paced(base, headers, rate)` is a context manager: a scheduler thread hands a write every 1/rate
seconds to a pool of 8 worker threads (a slow write does not delay the next one's start), until the
block ends; `.done` and `.rate()` say how many committed and at which rate, `.failed` how many did not
answer 200. The writes touch other Records of the generated Domain `big` than the reads ask about
(the Suppliers from S-5000 on, a Part per import), and between them move every kind of value the
vocabulary keeps: an enum (`update_supplier` sets a status), new Records with enum and string values
(`flag_supplier_risk` raises a RiskFlag), and titles (a one-Record import renames a Part).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx

WORKERS = 8


@dataclass
class Paced:
    rate_asked: float
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None

    def rate(self) -> float:
        return self.done / max(1e-9, (self.ended or time.perf_counter()) - self.started)


def _write(client: httpx.Client, headers: dict[str, str], i: int, suppliers: int, parts: int) -> int:
    supplier = f"S-{suppliers // 2 + i % max(1, suppliers // 2):04d}"
    kind = i % 3
    if kind == 0:
        path = "/api/v1/domains/big/operations/update_supplier/execute"
        body: dict[str, object] = {
            "parameters": {
                "key": supplier,
                "status": ["active", "inactive", "blocked"][i % 3],
                "risk_score": i % 101,
            }
        }
    elif kind == 1:
        path = "/api/v1/domains/big/operations/flag_supplier_risk/execute"
        body = {
            "parameters": {
                "supplier": supplier,
                "severity": ["low", "medium", "high"][i % 3],
                "reason": f"r{i}",
            }
        }
    else:
        path = "/api/v1/domains/big/imports"
        part = parts // 2 + i % max(1, parts // 2)
        values = {
            "part_number": f"P-{part:05d}",
            "name": f"Part {part} gasket {i}",
            "category": "seal",
            "unit_cost": "1.00",
        }
        body = {"source": "bench-writes", "records": [{"kind": "Part", "values": values}]}
    return client.post(path, json=body, headers=headers).status_code


@contextmanager
def paced(base: str, headers: dict[str, str], rate: float, *, suppliers: int, parts: int) -> Iterator[Paced]:
    """Writes at `rate` per second for as long as the block runs (none at rate 0)."""
    state = Paced(rate)
    if rate <= 0:
        yield state
        state.ended = time.perf_counter()
        return
    stop = threading.Event()
    local = threading.local()
    lock = threading.Lock()

    def one(i: int) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=base, timeout=60)
        status = _write(client, headers, i, suppliers, parts)
        with lock:
            if status == 200:
                state.done += 1
            else:
                state.failed += 1

    def schedule(pool: concurrent.futures.ThreadPoolExecutor) -> None:
        for i in itertools.count():
            due = state.started + i / rate
            while (wait := due - time.perf_counter()) > 0:
                if stop.wait(min(wait, 0.05)):
                    return
            if stop.is_set():
                return
            pool.submit(one, i)

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        scheduler = threading.Thread(target=schedule, args=(pool,), daemon=True)
        state.started = time.perf_counter()
        scheduler.start()
        try:
            yield state
        finally:
            stop.set()
            scheduler.join()
            state.ended = time.perf_counter()


__all__ = ["Paced", "paced"]
