"""CPU per request of the server options (issue 29, item 5): the gateway's HTTP server (uvicorn, as
`lorebase gateway` runs it, against granian) and keeper's gRPC server (grpc.aio, as `lorebase keeper`
runs it, against the sync server with a thread pool), for a cold Record GET and an Operation execute.
Not part of `make bench` or `make test`:

    python -m bench.servers            # LOREBASE_BENCH_SERVERS_RECORDS, _SECONDS, _ROUNDS

The stack of `make bench` (bench/stack.py) runs with a generated Domain of RECORDS Records
(bench/agent_reads.py). Beside the processes of `lorebase up` (gateway on uvicorn over keeper on
grpc.aio: the baseline, `uvicorn/aio`), this starts, each with the environment `up` gave its service
(as bench/scale.py does):

- `granian/aio`: the same gateway app (`lorebase_gateway.server.build_app`) served by granian (ASGI,
  one worker, uvloop) over `up`'s keeper;
- `uvicorn/sync`: a second uvicorn gateway (`python -m lorebase gateway`) over a keeper whose
  servicers run on the same asyncio loop as `lorebase keeper`'s, but behind `grpc.server` with a
  thread pool of 8 (the clients' count): each pool thread hands its call to the loop and waits
  (`run_coroutine_threadsafe`), since all of keeper's logic is async (asyncpg). It has no RPC
  metrics interceptor (grpc.aio's does not fit a sync server), so
- `uvicorn/bare`: a uvicorn gateway over `lorebase keeper` with a grpc.aio server without
  interceptors, is the grpc.aio side on equal terms.

Each round runs every option once, in an order rotated per round, each option's gateway loaded by wrk
(8 connections, 2 threads) for SECONDS; per option and workload the CPU per request of its gateway
(with granian's worker processes), its keeper and PostgreSQL (postmaster and backends) is read from
/proc before and after (utime + stime), and the load average is printed beside each run. The machine
may be shared: compare the ratios of the medians over the rounds, not single runs. The result is
printed as Markdown (bench/RESULTS.md and docs/performance.md keep the figures).

granian is not a dependency of Lorebase: install it where this can import it (e.g. `pip install
--target /tmp/granian granian` and PYTHONPATH=/tmp/granian); without it the granian option is left
out.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
RECORDS = int(os.environ.get("LOREBASE_BENCH_SERVERS_RECORDS", "50000"))
SECONDS = int(os.environ.get("LOREBASE_BENCH_SERVERS_SECONDS", "5"))
ROUNDS = int(os.environ.get("LOREBASE_BENCH_SERVERS_ROUNDS", "5"))
POOL_THREADS = 8


# -- the options' entry points (run in their own processes) ------------------------------------------


class _AbortError(Exception):
    pass


class _AioContext:
    """What keeper's servicer methods use of a grpc.aio context, over a sync server's context."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def set_trailing_metadata(self, metadata: Any) -> None:
        self._context.set_trailing_metadata(metadata)

    def code(self) -> Any:
        return self._context.code()

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        raise _AbortError(code, details, trailing_metadata)


class _SyncServicer:
    """A servicer for grpc.server whose methods run the aio servicer's on `loop` and wait."""

    def __init__(self, inner: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop

    def __getattr__(self, rpc: str) -> Callable[[Any, Any], Any]:
        method = getattr(self._inner, rpc)

        def call(message: Any, context: Any) -> Any:
            future = asyncio.run_coroutine_threadsafe(method(message, _AioContext(context)), self._loop)
            try:
                return future.result()
            except _AbortError as abort:
                code, details, trailing = abort.args
                if trailing:
                    context.set_trailing_metadata(trailing)
                context.abort(code, details)

        return call


def keeper_sync() -> int:
    """`lorebase keeper`'s runtime and servicers behind grpc.server with a thread pool."""
    import grpc
    import uvloop
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc
    from lorebase_keeper.api import KeeperServicer, MemoryStoreServicer
    from lorebase_keeper.server import build_runtime

    from lorebase import event_loop
    from lorebase.config import load_settings
    from lorebase.grpc_serve import MAX_MESSAGE_BYTES, MAX_METADATA_BYTES
    from lorebase.logs import configure_service_logging
    from lorebase.v1 import keeper_pb2_grpc, memory_pb2_grpc

    settings = load_settings()
    configure_service_logging("keeper", settings)
    loop = uvloop.new_event_loop()
    rt = loop.run_until_complete(build_runtime(settings))
    threading.Thread(target=loop.run_forever, daemon=True).start()
    server = grpc.server(
        ThreadPoolExecutor(max_workers=POOL_THREADS),
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ],
    )
    keeper_pb2_grpc.add_KeeperServicer_to_server(_SyncServicer(KeeperServicer(rt), loop), server)  # type: ignore[arg-type]
    memory_pb2_grpc.add_MemoryStoreServicer_to_server(_SyncServicer(MemoryStoreServicer(rt), loop), server)  # type: ignore[arg-type]
    checks = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    server.add_insecure_port(settings.model.services.keeper.listen)
    server.start()
    checks.set("", health_pb2.HealthCheckResponse.SERVING)
    event_loop.settled()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop(2).wait()
    return 0


def keeper_aio_bare() -> int:
    """`lorebase keeper` as it runs, but its grpc.aio server without interceptors (no RPC metrics):
    the grpc.aio side of the comparison with the sync server on equal terms."""
    import grpc
    from lorebase_keeper import server

    from lorebase import grpc_serve
    from lorebase.config import load_settings

    def bare() -> grpc.aio.Server:
        return grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", grpc_serve.MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", grpc_serve.MAX_MESSAGE_BYTES),
                ("grpc.max_metadata_size", grpc_serve.MAX_METADATA_BYTES),
            ]
        )

    grpc_serve.new_server = bare  # type: ignore[assignment]
    return server.main(load_settings())


def granian_app() -> Any:
    """The gateway's app as `lorebase gateway` builds it (granian's factory, in its worker)."""
    from lorebase_gateway.server import build_app

    from lorebase.config import load_settings
    from lorebase.logs import configure_service_logging

    settings = load_settings()
    configure_service_logging("gateway", settings)
    return build_app(settings)


def gateway_granian() -> int:
    from granian import Granian  # type: ignore[import-not-found]
    from granian.constants import Interfaces, Loops  # type: ignore[import-not-found]

    Granian(
        "bench.servers:granian_app",
        address="127.0.0.1",
        port=int(os.environ["LOREBASE_HTTP_PORT"]),
        interface=Interfaces.ASGI,
        workers=1,
        loop=Loops.uvloop,
        factory=True,
        log_enabled=False,
        working_dir=ROOT,
    ).serve()
    return 0


# -- the measure ---------------------------------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    try:
        return [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return []


def _ticks(pids: list[int]) -> int:
    from bench import cpu

    return sum(cpu._ticks(p) for pid in pids for p in _tree(pid))


@dataclass
class Option:
    name: str
    base: str
    gateway: int
    keeper: int
    ms: dict[str, list[dict[str, float]]] = field(default_factory=dict)


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL, cwd=ROOT)


def _run(option: Option, workload: str, script: Path, postmaster: int) -> dict[str, float]:
    from bench import cpu

    before = (_ticks([option.gateway]), _ticks([option.keeper]), _postgres(postmaster))
    load = os.getloadavg()[0]
    out = subprocess.run(
        ["wrk", "-t2", "-c8", f"-d{SECONDS}s", "-s", str(script), option.base],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    after = (_ticks([option.gateway]), _ticks([option.keeper]), _postgres(postmaster))
    requests = int(out.split(" requests in")[0].split()[-1])
    errors = int(out.split("Non-2xx or 3xx responses: ")[1].split()[0]) if "Non-2xx" in out else 0
    per = [(a - b) * cpu.TICK_S * 1000 / max(1, requests) for a, b in zip(after, before, strict=True)]
    row = {"gateway": per[0], "keeper": per[1], "postgres": per[2], "requests": requests, "load": load}
    row["total"] = per[0] + per[1] + per[2]
    print(
        f"  {workload:8} {option.name:13} {requests / SECONDS:7.0f}/s errors {errors:4d} load {load:5.2f}  "
        f"gateway {per[0]:.3f} keeper {per[1]:.3f} postgres {per[2]:.3f} ms/request",
        flush=True,
    )
    if errors:
        raise SystemExit(f"{option.name} answered {errors} errors to {workload}")
    return row


def _postgres(postmaster: int) -> int:
    from bench import cpu

    return cpu._ticks(postmaster, children=True) + sum(cpu._ticks(p) for p in _tree(postmaster)[1:])


def _wait(base: str, headers: dict[str, str], process: subprocess.Popen[bytes] | None) -> None:
    import httpx

    from bench.stack import RECORD

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise SystemExit(f"a process of {base} exited with {process.returncode}")
        try:
            if httpx.get(base + RECORD, headers=headers, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"{base} did not answer")


def measure() -> int:
    from bench import agent_reads, reads, run, stack
    from bench.cpu import service_role
    from lorebase.embedded import free_port

    try:
        import granian  # type: ignore[import-not-found]  # noqa: F401

        with_granian = True
    except ImportError:
        with_granian = False
        print("granian is not importable: its option is left out", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as tmp, stack.started(Path(tmp)) as running:
        work = Path(tmp)
        print(f"loading {RECORDS} Records (load average {os.getloadavg()[0]:.2f})", flush=True)
        big = agent_reads.load(running.base, running.headers, RECORDS)
        cold = reads.cold_script(big, work, stack.ADMIN_KEY)
        writes = work / "writes.lua"
        writes.write_text(run.WRITE_LUA.replace("KEY", stack.ADMIN_KEY))
        services = {
            service_role(psutil.Process(pid).cmdline()): pid for pid in _tree(running.process.pid)[1:]
        }
        gateway_env, keeper_env = _environ(services["gateway"]), _environ(services["keeper"])  # type: ignore[index]
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        options: list[Option] = []
        started: list[subprocess.Popen[bytes]] = []
        try:
            keepers = {}
            for server, argv in (
                ("aio", [sys.executable, "-m", "lorebase", "keeper"]),
                ("bare", [sys.executable, "-m", "bench.servers", "keeper-aio-bare"]),
                ("sync", [sys.executable, "-m", "bench.servers", "keeper-sync"]),
            ):
                listen = f"127.0.0.1:{free_port()}"
                env = {
                    **keeper_env,
                    "LOREBASE_SERVICES__KEEPER__LISTEN": listen,
                    "LOREBASE_SERVICES__KEEPER__ADDRESS": listen,
                    "LOREBASE_SERVICES__KEEPER__METRICS_LISTEN": "",
                    "PYTHONPATH": path,
                }
                started.append(_start(argv, env, work / f"keeper-{server}.log"))
                keepers[server] = (listen, started[-1].pid)
            gateways = [("uvicorn", "aio"), ("uvicorn", "bare"), ("uvicorn", "sync")]
            if with_granian:
                gateways.insert(1, ("granian", "aio"))
            for http, server in gateways:
                port = free_port()
                listen, keeper_pid = keepers[server]
                env = {
                    **gateway_env,
                    "LOREBASE_HTTP_PORT": str(port),
                    "LOREBASE_HTTP__METRICS_LISTEN": "",
                    "LOREBASE_SERVICES__KEEPER__ADDRESS": listen,
                    "PYTHONPATH": path,
                }
                argv = [sys.executable, "-m", "lorebase", "gateway"]
                if http == "granian":
                    argv = [sys.executable, "-m", "bench.servers", "gateway-granian"]
                started.append(_start(argv, env, work / f"gateway-{http}-{server}.log"))
                base = f"http://127.0.0.1:{port}"
                _wait(base, running.headers, started[-1])
                options.append(Option(f"{http}/{server}", base, started[-1].pid, keeper_pid))
            # A warm-up of every option, then the rounds, the order rotated each round.
            for option in options:
                for script in (cold, writes):
                    subprocess.run(
                        ["wrk", "-t2", "-c8", "-d2s", "-s", str(script), option.base],
                        check=True,
                        capture_output=True,
                    )
            for index in range(ROUNDS):
                print(f"round {index + 1} of {ROUNDS}", flush=True)
                turn = options[index % len(options) :] + options[: index % len(options)]
                for workload, script in (("cold GET", cold), ("execute", writes)):
                    for option in turn:
                        option.ms.setdefault(workload, []).append(
                            _run(option, workload, script, running.meter.postmaster_pid)
                        )
        finally:
            for process in reversed(started):
                process.terminate()
            for process in started:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
    _report(options)
    return 0


def _report(options: list[Option]) -> None:
    """Medians over the rounds, and the median and range of each round's ratio to the baseline
    (`uvicorn/aio`) measured in the same round: the figure to read on a shared machine."""
    base = options[0]
    print()
    print(
        "| workload | option | rounds | gateway | keeper | PostgreSQL | total | gateway / uvicorn "
        "| keeper / aio | total / uvicorn/aio | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for workload in base.ms:
        for option in options:
            rows = option.ms[workload]
            med = {
                k: statistics.median(r[k] for r in rows) for k in ("gateway", "keeper", "postgres", "total")
            }
            cells = []
            for part in ("gateway", "keeper", "total"):
                ratios = [r[part] / b[part] for r, b in zip(rows, base.ms[workload], strict=True)]
                cells.append(f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
            loads = [r["load"] for r in rows]
            print(
                f"| {workload} | {option.name} | {len(rows)} | {med['gateway']:.3f} | {med['keeper']:.3f} | "
                f"{med['postgres']:.3f} | {med['total']:.3f} | {' | '.join(cells)} | "
                f"{min(loads):.1f}-{max(loads):.1f} |"
            )
    print()
    print(json.dumps({o.name: o.ms for o in options}))


def main(argv: list[str]) -> int:
    if argv[:1] == ["keeper-sync"]:
        return keeper_sync()
    if argv[:1] == ["keeper-aio-bare"]:
        return keeper_aio_bare()
    if argv[:1] == ["gateway-granian"]:
        return gateway_granian()
    return measure()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
