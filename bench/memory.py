"""The agent-memory figures of `make bench` (issue 6), each paired back to back with raw PostgreSQL:

1. Mutations: memory record creates per second through REST, 8 clients (wrk), every one with its
   own idempotency key, all in one scope: one namespace, so one journal, whose appends serialize
   on the journal's row lock (docs/memory.md; keeper groups them into shared transactions). Beside
   raw asyncpg single-row transactions (BEGIN; INSERT; COMMIT, synchronous_commit on) at 1
   connection: the serial limit. Target: 0.5x.
2. Updates: record updates per second through REST, 8 clients each updating its own record of
   that one scope (with the record_revision its last answer gave), beside the same raw
   transactions. Target: 0.5x.
3. Catch-up: one consumer following the seed's protocol (fence at the first page's
   high_watermark, pages of 256, `after` = next_cursor until complete) over the journal the
   mutations filled, repeated for the measurement time; entries per second and per-page
   latency. Beside raw keyset pages of 256 of the same entries (`sequence > $after AND
   sequence <= $fence ORDER BY sequence LIMIT 256`) at 1 connection.

LOREBASE_BENCH_SECONDS and LOREBASE_BENCH_ROUNDS apply; LOREBASE_BENCH_MEMORY=0 skips both.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from bench import cpu

ENABLED = os.environ.get("LOREBASE_BENCH_MEMORY", "1") != "0"
PRINCIPAL = "agt_bench"
SCOPE = {"project_id": "bench", "mission_id": None, "agent_id": "bench", "visibility": "shared"}
PAGE = 256

MUTATION_LUA = """
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
counter = 0
request = function()
  counter = counter + 1
  local body = string.format(
    '{"scope": {"project_id": "bench", "mission_id": null, "agent_id": "bench", "visibility": "shared"},'
    .. ' "content": {"fact": "bench memory", "n": %d}, "idempotency_key": "NONCE-%d-%d"}',
    counter, tid, counter)
  return wrk.format("POST", "/api/v1/memory/records",
    {["Content-Type"]="application/json", ["Authorization"]="Bearer KEY"}, body)
end
"""

# One connection per wrk thread, each updating its own record with the revision of its last answer.
UPDATE_LUA = """
local records = {RECORDS}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
  thread:set("rid", records[threads])
end
counter = 0
revision = 1
request = function()
  counter = counter + 1
  local body = string.format(
    '{"record_revision": %d, "content": {"fact": "bench update", "n": %d}, "idempotency_key": "NONCE-%d-%d"}',
    revision, counter, tid, counter)
  return wrk.format("PATCH", "/api/v1/memory/records/" .. rid,
    {["Content-Type"]="application/json", ["Authorization"]="Bearer KEY"}, body)
end
response = function(status, headers, body)
  local seen = string.match(body, '"record_revision":(%d+)')
  if seen then revision = tonumber(seen) end
end
"""
UPDATERS = 8


def agent_key(base: str, admin: dict[str, str]) -> str:
    """A service principal with every memory capability on SCOPE; its API key."""
    with httpx.Client(base_url=base, timeout=60) as client:
        created = client.post(
            "/api/v1/principals", json={"id": PRINCIPAL, "type": "service", "name": "bench"}, headers=admin
        )
        assert created.status_code in (201, 409), created.text
        key = client.post(f"/api/v1/principals/{PRINCIPAL}/keys", headers=admin)
        assert key.status_code == 201, key.text
        grant = client.post(
            "/api/v1/memory/grants",
            json={
                "principal": PRINCIPAL,
                "scope": {k: v for k, v in SCOPE.items() if k != "visibility"},
                "capabilities": ["memory_read", "memory_write", "memory_checkpoint"],
            },
            headers=admin,
        )
        assert grant.status_code == 201, grant.text
        return str(key.json()["key"])


def update_script(base: str, key: str, work: Path) -> Path:
    """A wrk script for UPDATERS clients, each with a record of its own (created here)."""
    records = []
    with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"}) as client:
        for _ in range(UPDATERS):
            created = client.post(
                "/api/v1/memory/records",
                json={"scope": SCOPE, "content": {"fact": "updated by the bench"}},
                headers={"Idempotency-Key": secrets.token_hex(8)},
            )
            assert created.status_code == 201, created.text
            records.append(created.json()["record"]["record_id"])
    script = work / f"memory-update-{secrets.token_hex(4)}.lua"
    listed = ", ".join(f'"{record}"' for record in records)
    script.write_text(UPDATE_LUA.replace("RECORDS", listed).replace("KEY", key).replace("NONCE", script.stem))
    return script


def rest_catch_up(base: str, key: str, duration_s: float, measure: Callable[..., Any]) -> Any:
    """Full catch-ups from the start of the journal with pages of 256, until duration_s has passed."""
    headers = {"Authorization": f"Bearer {key}"}
    latencies: list[float] = []
    entries = 0
    with httpx.Client(base_url=base, timeout=60, headers=headers) as client:
        before = cpu.begin()
        started = time.perf_counter()
        while time.perf_counter() - started < duration_s:
            after: Any = None
            through: Any = None
            while True:
                t0 = time.perf_counter()
                response = client.post(
                    "/api/v1/memory/changes",
                    json={
                        "contract_version": 1,
                        "scope": SCOPE,
                        "query": {"after": after, "through": through, "limit": PAGE},
                    },
                )
                latencies.append(time.perf_counter() - t0)
                assert response.status_code == 200, response.text
                page = response.json()
                entries += len(page["entries"])
                through = through or page["high_watermark"]
                after = page["next_cursor"] or after
                if page["complete"]:
                    break
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, len(latencies))
    return _measure(measure, entries / elapsed, latencies, usage)


async def raw_catch_up(url: str, duration_s: float, measure: Callable[..., Any]) -> Any:
    conn = await asyncpg.connect(url)
    try:
        journal_id, fence = await conn.fetchrow(
            "SELECT id, last_sequence FROM memory_journals WHERE agent_id = 'bench' AND project_id = 'bench'"
        )
        statement = await conn.prepare(
            "SELECT * FROM memory_journal_entries WHERE journal_id = $1 AND sequence > $2 AND sequence <= $3 "
            "ORDER BY sequence LIMIT 256"
        )
        latencies: list[float] = []
        entries = 0
        before = cpu.begin()
        started = time.perf_counter()
        while time.perf_counter() - started < duration_s:
            after = 0
            while after < fence:
                t0 = time.perf_counter()
                rows = await statement.fetch(journal_id, after, fence)
                latencies.append(time.perf_counter() - t0)
                entries += len(rows)
                after = rows[-1]["sequence"]
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, len(latencies))
    finally:
        await conn.close()
    return _measure(measure, entries / elapsed, latencies, usage)


def _measure(
    measure: Callable[..., Any], rate: float, latencies: list[float], usage: cpu.Usage | None
) -> Any:
    """A Measure of `rate` with the p50/p99 of `latencies` (seconds) and the CPU per page."""
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    result = measure("", rate, quantiles[49] * 1000, quantiles[98] * 1000)
    result.cpu = usage
    return result


async def journal_size(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "SELECT coalesce(max(last_sequence), 0) FROM memory_journals WHERE agent_id = 'bench'"
            )
        )
    finally:
        await conn.close()


def measure(
    base: str,
    admin: dict[str, str],
    url: str,
    work: Path,
    *,
    rounds: int,
    duration_s: int,
    wrk: Callable[..., Any],
    raw_writes: Callable[[str], Any],
    median_pair: Callable[[list[tuple[Any, Any]]], tuple[Any, Any]],
    measure_type: Callable[..., Any],
) -> tuple[list[tuple[str, Any, str, Any, float | None]], list[str]]:
    """The memory rows of the results table and a line on the journal measured."""
    key = agent_key(base, admin)
    mutation_pairs, update_pairs, catch_up_pairs = [], [], []
    for _ in range(rounds):
        script = work / f"memory-{secrets.token_hex(4)}.lua"
        script.write_text(MUTATION_LUA.replace("KEY", key).replace("NONCE", script.stem))
        mutation_pairs.append((wrk(base, script=str(script)), asyncio.run(raw_writes(url))))
        updates = update_script(base, key, work)
        update_pairs.append(
            (
                wrk(base, script=str(updates), threads=UPDATERS, connections=UPDATERS),
                asyncio.run(raw_writes(url)),
            )
        )
    entries = asyncio.run(journal_size(url))
    for _ in range(rounds):
        catch_up_pairs.append(
            (
                rest_catch_up(base, key, duration_s, measure_type),
                asyncio.run(raw_catch_up(url, duration_s, measure_type)),
            )
        )
    ours_m, raw_m = median_pair(mutation_pairs)
    ours_u, raw_u = median_pair(update_pairs)
    ours_c, raw_c = median_pair(catch_up_pairs)
    rows: list[tuple[str, Any, str, Any, float | None]] = [
        (
            "memory: record creates/s, REST, 8 clients, one scope (one journal)",
            ours_m,
            "raw asyncpg BEGIN;INSERT;COMMIT at 1 connection",
            raw_m,
            0.5,
        ),
        (
            "memory: record updates/s, REST, 8 clients on a record each, one scope (one journal)",
            ours_u,
            "raw asyncpg BEGIN;INSERT;COMMIT at 1 connection",
            raw_u,
            0.5,
        ),
        (
            f"memory: catch-up entries/s, REST, pages of {PAGE}, 1 consumer (p50/p99 per page)",
            ours_c,
            f"raw keyset SELECTs of {PAGE} journal entries at 1 connection",
            raw_c,
            None,
        ),
    ]
    return rows, [f"memory: the catch-up read a journal of {entries} entries (from the mutation rounds)."]
