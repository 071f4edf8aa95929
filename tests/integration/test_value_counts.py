"""Resolve's value counts kept up to date from the history equal a fresh count at every head,
whether the changes since are read (a few, or more than the first page: PostgreSQL counts them
first) or are too many and the counts are taken again."""

from __future__ import annotations

import random

import pytest
from lorebase_keeper.reads import ValueCounts, read_point
from lorebase_keeper.reads import value_counts as value_counts_module

from tests.integration.conftest import Stack

EXECUTE = "/api/v1/domains/supply/operations/update_supplier/execute"


@pytest.mark.parametrize(("first", "max_delta"), [(1_000, 50_000), (1, 100), (1, 2)])
async def test_kept_counts_follow_commits(
    supply: Stack, monkeypatch: pytest.MonkeyPatch, first: int, max_delta: int
) -> None:
    monkeypatch.setattr(value_counts_module, "_FIRST", first)
    counts = ValueCounts(max_delta=max_delta)
    domain = await supply.rt.domains.get("supply")
    wanted = {"status": 50, "city": 50, "legal_name": 1}  # legal_name: more values than its hard cap
    rng = random.Random(7)

    async def check() -> None:
        async def read(txn):  # type: ignore[no-untyped-def]
            point = await read_point(txn, domain, "main", None)
            counted = await counts.counted(
                txn,
                domain.id,
                "main",
                point.chain,
                point.branch.generation,
                {("Supplier", name): limit for name, limit in wanted.items()},
            )
            kept = {name: found.sorted(wanted[name]) for (_, name), found in counted.items()}
            fresh = {
                name: await txn.value_counts(domain.id, "main", "Supplier", name, limit=max(10 * limit, 500))
                for name, limit in wanted.items()
            }
            return kept, fresh

        kept, fresh = await supply.rt.db.read("counts", read)
        for name, limit in wanted.items():
            assert kept[name] == fresh[name][: limit + 1], name

    await check()
    for step in range(12):
        key = f"S-{1001 + rng.randrange(30)}"
        status = rng.choice(["active", "inactive", "blocked"])
        response = await supply.http.post(
            EXECUTE, json={"parameters": {"key": key, "status": status}}, headers=supply.admin
        )
        assert response.status_code == 200, response.text
        if step % 3 == 0:
            await check()
    await check()


async def test_resolve_counts_records_after_a_commit(supply: Stack) -> None:
    async def blocked() -> int:
        response = await supply.http.post(
            "/api/v1/domains/supply/resolve",
            json={"text": "blocked", "record_misses": False},
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        found = [
            c for c in response.json()["candidates"] if c["target"] == "value" and c["attribute"] == "status"
        ]
        return int(found[0]["records"]) if found else 0

    before = await blocked()
    response = await supply.http.post(
        EXECUTE, json={"parameters": {"key": "S-1001", "status": "blocked"}}, headers=supply.admin
    )
    assert response.status_code == 200, response.text
    assert await blocked() == before + 1
