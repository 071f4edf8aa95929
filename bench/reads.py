"""The read workloads of `make bench` and their raw baselines (issue 17: one a cache cannot flatter).

- Reads, cold: Record GETs of random keys over the generated Domain `big` (bench/agent_reads.py
  loads it; LOREBASE_BENCH_BIG_RECORDS Records, 1,000,000 by default). wrk picks each request's
  path at random from a file of up to COLD_KEYS paths sampled uniformly from all the Domain's
  Records (Suppliers, Parts and PurchaseOrders in their proportions), each thread with its own
  seed. Baseline: pgbench point SELECTs of random keys over the same Records (`\\if` on one random
  number picks the Kind, as the file does), 8 connections, prepared statements.
- Reads, repeated: the same Record (supply's S-1001), the same request, while the head does not
  move: the common agent pattern. Baseline: pgbench point SELECTs of supply's 30 Suppliers.
- Reads, repeated with max-stale: the same request opting into bounded staleness (`STALE`), so the
  gateway answers it from its cache without asking keeper (lorebase_gateway.read_cache); measured
  in the same rounds as the plain repeated read, against the same baseline run.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import cpu
from bench.agent_reads import Big
from lorebase.embedded import postgres_bin_dir

# The opt-in of the cached repeated read: an answer up to 60 s old will do (RFC 9111 max-stale).
STALE = {"Cache-Control": "max-stale=60"}
COLD_KEYS = int(os.environ.get("LOREBASE_BENCH_COLD_KEYS", "200000"))

COLD_LUA = """
local paths = {}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  for line in io.lines("FILE") do paths[#paths + 1] = line end
  math.randomseed(os.time() * 1000 + tid * 7919)
end
request = function()
  return wrk.format("GET", paths[math.random(#paths)], {["Authorization"]="Bearer KEY"})
end
"""

SELECT = "SELECT \"values\" FROM records WHERE domain_id = {domain} AND branch = 'main' AND kind = '{kind}' AND key = "


def record_path(big: Big, index: int) -> str:
    """The REST path of the generated Domain's Record number `index` (0 ≤ index < big.total)."""
    if index < big.suppliers:
        kind, key = "Supplier", f"S-{index:04d}"
    elif index < big.suppliers + big.parts:
        kind, key = "Part", f"P-{index - big.suppliers:05d}"
    else:
        kind, key = "PurchaseOrder", f"PO-{index - big.suppliers - big.parts:0{big.order_width}d}"
    return f"/api/v1/domains/big/kinds/{kind}/records/{key}"


def cold_script(big: Big, work: Path, admin_key: str) -> Path:
    """The wrk script of the cold reads and its file of paths (a uniform sample of the Records)."""
    picked = random.Random(17).sample(range(big.total), min(big.total, COLD_KEYS))
    paths = work / "cold-paths.txt"
    paths.write_text("".join(record_path(big, index) + "\n" for index in picked))
    script = work / "cold.lua"
    script.write_text(COLD_LUA.replace("FILE", str(paths)).replace("KEY", admin_key))
    return script


def cold_sql(big: Big, domain_id: int) -> str:
    """The pgbench script of the cold baseline: one random Record of `big`, as record_path numbers them."""
    s, p = big.suppliers, big.parts
    return (
        f"\\set n random(0, {big.total - 1})\n"
        f"\\if :n < {s}\n"
        + SELECT.format(domain=domain_id, kind="Supplier")
        + "'S-' || lpad(:n::text, 4, '0');\n"
        f"\\elif :n < {s + p}\n"
        f"\\set m :n - {s}\n"
        + SELECT.format(domain=domain_id, kind="Part")
        + "'P-' || lpad(:m::text, 5, '0');\n"
        "\\else\n"
        f"\\set m :n - {s + p}\n"
        + SELECT.format(domain=domain_id, kind="PurchaseOrder")
        + f"'PO-' || lpad(:m::text, {big.order_width}, '0');\n"
        "\\endif\n"
    )


def repeated_sql(domain_id: int) -> str:
    """The pgbench script of the repeated baseline: one of supply's 30 Suppliers."""
    return "\\set n random(1001, 1030)\n" + SELECT.format(domain=domain_id, kind="Supplier") + "'S-' || :n;\n"


def pgbench(
    sql: str,
    *,
    host: str,
    port: int,
    database: str,
    password: str,
    duration_s: int,
    measure: Callable[..., Any],
) -> Any:
    """Point SELECTs at 8 connections (pgbench, prepared statements: a C client that is not the
    bottleneck), with the CPU per SELECT of PostgreSQL under the installed meter."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "select.sql"
        script.write_text(sql)
        os.chmod(tmp, 0o755)
        os.chmod(script, 0o644)
        command = [str(postgres_bin_dir() / "pgbench"), "-n", "-M", "prepared", "-c", "8", "-j", "2"]
        command += ["-T", str(duration_s), "-f", str(script), "-h", host, "-p", str(port), "-U", "postgres"]
        command += ["--log", "--log-prefix", f"{tmp}/log", database]
        out, usage = cpu.measured(
            lambda: (
                subprocess.run(
                    command,
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=tmp,
                    env={**os.environ, "PGPASSWORD": password},  # the embedded server asks for one
                ).stdout
            ),
            lambda text: int(re.search(r"actually processed: (\d+)", text).group(1)),  # type: ignore[union-attr]
        )
        rate = float(re.search(r"tps = ([\d.]+)", out).group(1))  # type: ignore[union-attr]
        latencies = []
        for log in Path(tmp).glob("log*"):
            for line in log.read_text().splitlines():
                parts = line.split()
                if len(parts) >= 3:
                    latencies.append(int(parts[2]) / 1000)
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 100 else [float("nan")] * 99
    result = measure("", rate, quantiles[49], quantiles[98])
    result.cpu = usage
    return result


__all__ = ["STALE", "cold_script", "cold_sql", "pgbench", "record_path", "repeated_sql"]
