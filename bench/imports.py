"""The import measure of `make bench`: LOREBASE_BENCH_IMPORT_RECORDS (100,000) Records in one import
through REST, beside raw COPY of as many rows into a table shaped like `records` (same indexes),
each with the CPU per Record of every process (bench/cpu.py). Then a schema change set's backfill
over the imported Records (docs/schema.md, "Changing a schema"): an Attribute added with a backfill
expression, every Record migrated in one Revision, beside a raw UPDATE of as many rows adding the
same member (LOREBASE_BENCH_BACKFILL=0 skips it)."""

from __future__ import annotations

import os
import time

import asyncpg
import httpx
import orjson

from bench import cpu

IMPORT_RECORDS = int(os.environ.get("LOREBASE_BENCH_IMPORT_RECORDS", "100000"))
ITEM_SCHEMA = {
    "kinds": {
        "Item": {
            "key": ["sku"],
            "title": "name",
            "attributes": {
                "sku": {"type": "string", "required": True},
                "name": {"type": "string"},
                "qty": {"type": "integer", "min": 0},
                "price": {"type": "decimal(10,2)"},
                "code": {"type": "string", "unique": True},
            },
        }
    }
}


def _items(count: int) -> list[dict[str, object]]:
    return [
        {
            "sku": f"SKU-{i:07d}",
            "name": f"Item number {i}",
            "qty": str(i % 1000),
            "price": f"{i % 5000}.{i % 100:02d}",
            "code": f"C{i}",
        }
        for i in range(count)
    ]


def rest_import(
    base: str, headers: dict[str, str], count: int, domain: str = "bulk"
) -> tuple[float, float, cpu.Usage | None]:
    """Records per second, seconds, and the CPU per Record, of one import of `count` Items into a
    new Domain."""
    with httpx.Client(base_url=base, timeout=600) as client:
        created = client.post(
            "/api/v1/domains", json={"name": domain, "schema": ITEM_SCHEMA}, headers=headers
        )
        assert created.status_code == 201, created.text
        body = orjson.dumps(
            {"source": "bench", "records": [{"kind": "Item", "values": v} for v in _items(count)]}
        )
        before = cpu.begin()
        started = time.perf_counter()
        answer = client.post(
            f"/api/v1/domains/{domain}/imports",
            content=body,
            headers={**headers, "Content-Type": "application/json"},
        )
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, count)
        assert answer.status_code == 200, answer.text[:500]
    return count / elapsed, elapsed, usage


async def raw_copy(url: str, count: int) -> tuple[float, float, cpu.Usage | None]:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DROP TABLE IF EXISTS bench_copy")
        await conn.execute("CREATE TABLE bench_copy (LIKE records INCLUDING ALL)")
        rows = [
            (999, "main", "Item", v["sku"], orjson.dumps(v).decode(), "{}", "r", "r") for v in _items(count)
        ]
        before = cpu.begin()
        started = time.perf_counter()
        async with conn.transaction():
            await conn.copy_records_to_table(
                "bench_copy",
                records=rows,
                columns=[
                    "domain_id",
                    "branch",
                    "kind",
                    "key",
                    "values",
                    "provenance",
                    "created_revision",
                    "updated_revision",
                ],
            )
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, count)
    finally:
        await conn.close()
    return count / elapsed, elapsed, usage


BACKFILL = os.environ.get("LOREBASE_BENCH_BACKFILL", "1") != "0"
BAND = {
    "op": "add_attribute",
    "kind": "Item",
    "attribute": "band",
    "definition": {"type": "enum", "values": ["small", "large"]},
    "backfill": {"expression": "'large' if qty >= 500 else 'small'"},
}


def rest_backfill(
    base: str, headers: dict[str, str], count: int, domain: str
) -> tuple[float, float, cpu.Usage | None]:
    """Records per second, seconds, and the CPU per Record, of a change set backfilling a new
    Attribute on the `count` Items of `domain` (an import above), one Revision."""
    with httpx.Client(base_url=base, timeout=1800) as client:
        before = cpu.begin()
        started = time.perf_counter()
        answer = client.post(
            f"/api/v1/domains/{domain}/branches/main/schema/changes",
            json={"changes": [BAND]},
            headers=headers,
        )
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, count)
        assert answer.status_code == 200, answer.text[:500]
        assert answer.json()["migrated"]["records"] == count, answer.text[:500]
    return count / elapsed, elapsed, usage


async def raw_backfill(url: str, count: int) -> tuple[float, float, cpu.Usage | None]:
    """The same member added to every row of bench_copy (raw_copy's table) in one UPDATE."""
    conn = await asyncpg.connect(url)
    try:
        before = cpu.begin()
        started = time.perf_counter()
        await conn.execute(
            """UPDATE bench_copy SET "values" = "values" || jsonb_build_object('band',
               CASE WHEN ("values"->>'qty')::int >= 500 THEN 'large' ELSE 'small' END)"""
        )
        elapsed = time.perf_counter() - started
        usage = cpu.end(before, count)
    finally:
        await conn.close()
    return count / elapsed, elapsed, usage


__all__ = ["BACKFILL", "IMPORT_RECORDS", "raw_backfill", "raw_copy", "rest_backfill", "rest_import"]
