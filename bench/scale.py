"""Scale-out in `make bench` (issue 17): two keeper replicas and two gateways over the one PostgreSQL
and NATS of the running stack, as the Helm chart runs them.

`lorebase up` runs one process per service (lorebase.supervisor: SERVICES, no replica count), so the
extra processes are started here the way the chart starts its pods: each service's own entry point
(`python -m lorebase keeper`, `... gateway`) with the environment `up` gave the first one (read from
/proc/<pid>/environ), on distinct ports. In the chart a gateway reaches keeper through a headless
Service that resolves to every ready pod, with round_robin (lorebase.clients._channel); here both
new gateways get the two keepers as one gRPC address list (`ipv4:host:port,host:port`), which the
same channel spreads the same way. The first gateway (under `up`) stays as it was; the two-replica
measures load the two new gateways, half the clients each, and the CPU columns sum the replicas.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.cpu import Meter
from lorebase.embedded import free_port

READY_PATH = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"


@dataclass
class ScaleOut:
    """The two gateways' base URLs (each over both keepers) and the keepers' gRPC addresses."""

    gateways: list[str]
    keepers: list[str]


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


def _start(role: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "lorebase", role],
            env=env,
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
        )


def _wait_ready(base: str, headers: dict[str, str], processes: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise SystemExit(f"a scale-out process exited with {process.returncode} (see its log)")
        try:
            if httpx.get(base + READY_PATH, headers=headers, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"the scale-out gateway {base} did not answer")


def _wait_serving(address: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"the second keeper exited with {process.returncode} (see keeper-2.log)")
            try:
                if (
                    stub.Check(health_pb2.HealthCheckRequest(), timeout=2).status
                    == health_pb2.HealthCheckResponse.SERVING
                ):
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.3)
    raise SystemExit(f"the second keeper on {address} did not become healthy")


@contextmanager
def replicas(meter: Meter, work: Path, headers: dict[str, str]) -> Iterator[ScaleOut]:
    """A second keeper and two gateways over both keepers, counted by `meter`; stopped on exit."""
    running = meter.services()
    keeper_pid = next(pid for pid, role in running.items() if role == "keeper")
    gateway_pid = next(pid for pid, role in running.items() if role == "gateway")
    keeper_env, gateway_env = _environ(keeper_pid), _environ(gateway_pid)
    first = keeper_env["LOREBASE_SERVICES__KEEPER__LISTEN"]
    second = f"127.0.0.1:{free_port()}"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        keeper = _start(
            "keeper",
            {
                **keeper_env,
                "LOREBASE_SERVICES__KEEPER__LISTEN": second,
                "LOREBASE_SERVICES__KEEPER__ADDRESS": second,
            },
            work / "keeper-2.log",
        )
        processes.append(keeper)
        meter.add(keeper.pid, "keeper")
        _wait_serving(second, keeper)
        bases = []
        for index in (2, 3):
            port = free_port()
            gateway = _start(
                "gateway",
                {
                    **gateway_env,
                    "LOREBASE_HTTP_PORT": str(port),
                    "LOREBASE_SERVICES__KEEPER__ADDRESS": f"ipv4:{first},{second}",
                },
                work / f"gateway-{index}.log",
            )
            processes.append(gateway)
            meter.add(gateway.pid, "gateway")
            bases.append(f"http://127.0.0.1:{port}")
        for base in bases:
            _wait_ready(base, headers, processes)
        yield ScaleOut(bases, [first, second])
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
            meter.extra.pop(process.pid, None)


__all__ = ["ScaleOut", "replicas"]
