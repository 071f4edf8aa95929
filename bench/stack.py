"""The stack every bench measures: an embedded PostgreSQL and NATS, and `lorebase up --example
supply` against them (the README's path, with the servers named by URL), its processes metered
(bench/cpu.py). `make bench` (bench/run.py) and `make bench-scale` (bench/big_scale.py) start it so.
The services' log (their stderr) is shown as before and also kept in `Stack.log` (a measure reads
keeper's lines, bench/big_backfill.py). LOREBASE_BENCH_LOOP_LAG_MS (default 5; 0: off) turns on
each service's event-loop lag probe (`services.loop_lag_ms`: a wake-up every 5 ms, each lateness
past it logged).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from bench import cpu, feed
from lorebase.embedded import EmbeddedNats, EmbeddedPostgres, create_database, free_port

ADMIN_KEY = "bench-admin-key-0123456789abcdef"
ROOT = Path(__file__).resolve().parent.parent
LOOP_LAG_MS = os.environ.get("LOREBASE_BENCH_LOOP_LAG_MS", "5")
RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"


@dataclass(frozen=True)
class Stack:
    base: str
    headers: dict[str, str]
    url: str  # the bench database
    server: str  # the PostgreSQL server (its postgres database)
    nats_url: str
    process: subprocess.Popen[bytes]
    meter: cpu.Meter
    log: Path  # the services' stderr, as it is written


def _tee(source: IO[bytes], log: Path) -> None:
    """Copy the stack's stderr to ours and to `log`, line by line, until it closes."""
    with log.open("ab") as kept:
        for line in iter(source.readline, b""):
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()
            kept.write(line)
            kept.flush()


def wait_healthy(base: str, process: subprocess.Popen[bytes], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"lorebase up exited with {process.returncode}")
        try:
            if httpx.get(base + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit("the stack did not become healthy")


def _pg_settings() -> dict[str, str]:
    """LOREBASE_BENCH_PG_SETTINGS: server settings over the embedded defaults for an A/B run,
    `name=value` pairs separated by commas (e.g. `wal_compression=off,min_wal_size=80MB`)."""
    pairs = os.environ.get("LOREBASE_BENCH_PG_SETTINGS", "")
    return dict(item.strip().split("=", 1) for item in pairs.split(",") if item.strip())


@contextmanager
def started(work: Path, *, tracing_ratio: str | None = None) -> Iterator[Stack]:
    """The stack in `work`, healthy and with the supply example loaded, metered by `cpu.METER`;
    stopped (servers too) when the block ends. With `tracing_ratio`, traced at that ratio into a
    receiver that drops the spans (bench/otlp_sink.py)."""
    pg = EmbeddedPostgres(work / "pg", settings=_pg_settings())
    nats = EmbeddedNats(work / "nats")
    process: subprocess.Popen[bytes] | None = None
    sink: subprocess.Popen[bytes] | None = None
    try:
        server = pg.start()
        nats_url = nats.start()
        url = asyncio.run(create_database(server, "bench"))
        port = free_port()
        env = {
            **os.environ,
            "LOREBASE_DATA_DIR": str(work / "data"),
            "LOREBASE_DATABASE_URL": url,
            "LOREBASE_NATS_URL": nats_url,
            "LOREBASE_ADMIN_KEY": ADMIN_KEY,
            "LOREBASE_HTTP_PORT": str(port),
            # The bench measures throughput: the memory bench's service principal writes far more
            # than keeper.rate_limits lets one principal write.
            "LOREBASE_KEEPER__RATE_LIMITS__ENABLED": "false",
            "LOREBASE_SERVICES__LOOP_LAG_MS": LOOP_LAG_MS,
            **feed.STACK_ENV,
        }
        if tracing_ratio is not None:
            sink_port = free_port()
            sink = subprocess.Popen([sys.executable, "-m", "bench.otlp_sink", str(sink_port)], cwd=ROOT)
            env.update(
                LOREBASE_TRACING__ENABLED="true",
                LOREBASE_TRACING__OTLP_ENDPOINT=f"http://127.0.0.1:{sink_port}",
                LOREBASE_TRACING__SAMPLE_RATIO=tracing_ratio,
            )
        process = subprocess.Popen(
            [sys.executable, "-m", "lorebase", "up", "--example", "supply"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        log = work / "stack.log"
        assert process.stderr is not None
        threading.Thread(target=_tee, args=(process.stderr, log), daemon=True).start()
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, process)
        meter = cpu.Meter(stack_pid=process.pid, postmaster_pid=pg.pid, nats_pid=nats.pid)
        cpu.METER = meter
        # `up` loads the example after /health turns green: wait for the record.
        headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
        for _ in range(200):
            if httpx.get(base + RECORD, headers=headers).status_code == 200:
                break
            time.sleep(0.3)
        yield Stack(base, headers, url, server, nats_url, process, meter, log)
    finally:
        cpu.METER = None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        if sink is not None:
            sink.send_signal(signal.SIGINT)
            sink.wait(30)
        nats.stop()
        pg.stop()


__all__ = ["ADMIN_KEY", "RECORD", "Stack", "started", "wait_healthy"]
