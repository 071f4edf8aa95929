"""What `jetstream { sync_interval: always }` costs on this machine's disk (docs/feed.md, "Stream
and subjects"): `python -m bench.jetstream_sync`.

For each setting, a fresh nats-server (the venv's) with a file stream like the feed's, then
LOREBASE_BENCH_JS_MESSAGES (5,000) publishes of 700 bytes, one at a time, each waiting for its
acknowledgement with a `Nats-Msg-Id`, as the relay publishes. Prints publishes per second and the
acknowledgement latency, p50 and p99, for the server's default (fsync every 2 minutes) and for
`always` (fsync before each acknowledgement), LOREBASE_BENCH_ROUNDS (3) times, interleaved.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import nats

from lorebase.embedded import free_port, nats_server_binary

MESSAGES = int(os.environ.get("LOREBASE_BENCH_JS_MESSAGES", "5000"))
ROUNDS = int(os.environ.get("LOREBASE_BENCH_ROUNDS", "3"))
SETTINGS = {"default (2m)": "", "always": "jetstream {\n  sync_interval: always\n}\n"}


def _wait_ready(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
                if sock.recv(5) == b"INFO ":
                    return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nats-server did not answer on port {port}")


async def _publish(url: str) -> tuple[float, list[float]]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="BENCH", subjects=["bench.>"], duplicate_window=600.0)
        body = b"x" * 700
        latencies = []
        started = time.perf_counter()
        for n in range(MESSAGES):
            sent = time.perf_counter()
            await js.publish("bench.main", body, headers={"Nats-Msg-Id": f"evt_{n}"})
            latencies.append((time.perf_counter() - sent) * 1000)
        return MESSAGES / (time.perf_counter() - started), latencies
    finally:
        await nc.close()


def measure(config: str) -> str:
    with tempfile.TemporaryDirectory(prefix="lorebase-bench-js-") as directory:
        port = free_port()
        command = [str(nats_server_binary()), "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", directory]
        if config:
            path = Path(directory) / "nats.conf"
            path.write_text(config)
            command += ["-c", str(path)]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_ready(port)
            rate, latencies = asyncio.run(_publish(f"nats://127.0.0.1:{port}"))
        finally:
            server.terminate()
            server.wait(10)
    q = statistics.quantiles(latencies, n=100)
    return f"{rate:.0f} publishes/s, acknowledgement p50 {q[49]:.2f} ms, p99 {q[98]:.2f} ms"


def main() -> None:
    print(f"JetStream publish → acknowledgement, {MESSAGES} messages one at a time, file storage:")
    for _ in range(ROUNDS):
        for name, config in SETTINGS.items():
            print(f"- sync_interval {name}: {measure(config)}", flush=True)


if __name__ == "__main__":
    main()
