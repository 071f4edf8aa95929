"""Resolve's value counts kept up to date from the history equal a fresh count at every head,
whether the changes since are read (a few, or more than the first page: PostgreSQL counts them
first) or are too many and the counts are taken again; and a schema change set hands them the
counts of its new head (schema_changes/counts.py), so the first resolve after it counts nothing."""

from __future__ import annotations

import asyncio
import importlib
import random
from typing import Any

import pytest
from lorebase_keeper.reads import KEPT_COUNTS, ValueCounts, read_point
from lorebase_keeper.reads import value_counts as value_counts_module
from lorebase_keeper.writes import CountsMoved

from lorebase.vocabulary import values_read
from lorebase_store.statistics import StatisticsTxn
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


async def test_a_read_at_the_head_of_a_commit_handing_over_counts_waits_for_them(
    supply: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change set's commit lands before keeper hands its counts over (keeper's loop may serve a
    resolve between the two): a read of that head waits for them rather than count the Kind again,
    and counts as before when the commit says it did not land."""
    monkeypatch.setattr(value_counts_module, "LANDING_WAIT_S", 1.0)
    counts = ValueCounts(max_delta=0)  # any change since a count: the Kind counted again
    domain = await supply.rt.domains.get("supply")
    status = ("Supplier", "status")

    async def read() -> tuple[int, Any, Any]:
        async def counted(txn):  # type: ignore[no-untyped-def]
            point = await read_point(txn, domain, "main", None)
            found = await counts.counted(
                txn, domain.id, "main", point.chain, point.branch.generation, {status: 50}
            )
            return point.branch.generation, point.chain.segments, found[status].values

        return await supply.rt.db.read("counts", counted)

    for handed_over in (True, False, None):  # None: the commit never tells (its work ran again)
        generation, chain, before = await read()
        marker = {"handed-over": 1}  # what no count of the Kind gives
        moved = CountsMoved(
            domain.id, "main", (), chain, generation, generation + 1, frozenset({status}), {status: marker}
        )
        counts.landing(moved)
        response = await supply.http.post(
            EXECUTE,
            json={
                "parameters": {
                    "key": "S-1001",
                    "status": {True: "blocked", False: "active", None: "inactive"}[handed_over],
                }
            },
            headers=supply.admin,
        )
        assert response.status_code == 200, response.text
        waiting = asyncio.create_task(read())
        await asyncio.sleep(0.3)  # it reads the new head meanwhile and waits for its counts
        if handed_over:
            counts.committed(moved)
            assert (await waiting)[2] == marker
        elif handed_over is False:
            counts.landed(moved)  # abandoned: it counts the head
            after = (await waiting)[2]
            assert after != marker and sum(after.values()) == sum(before.values())
        else:  # past LANDING_WAIT_S it counts the head, and no read waits for it again
            after = (await waiting)[2]
            assert after != marker and sum(after.values()) == sum(before.values())
            assert not counts._landing, "a landing never told stays no longer than its wait"


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


CHANGES = "/api/v1/domains/supply/branches/main/schema/changes"
BAND = {
    "op": "add_attribute",
    "kind": "Supplier",
    "attribute": "band",
    "definition": {"type": "enum", "values": ["top", "rest"], "description": "Tier band."},
    "backfill": {"expression": "'top' if tier == 1 else 'rest'"},
}
STATUS_TO_STRING = {  # an indexed Attribute's type converted, one value mapped
    "op": "change_attribute",
    "kind": "Supplier",
    "attribute": "status",
    "definition": {"type": "string", "values": None},
    "map": {"blocked": "suspended"},
}
TIER_TO_ENUM = {  # an Attribute resolve did not read, converted to one it reads
    "op": "change_attribute",
    "kind": "Supplier",
    "attribute": "tier",
    "definition": {
        "type": "enum",
        "values": ["strategic", "preferred", "approved"],
        "min": None,
        "max": None,
    },
    "map": {"1": "strategic", "2": "preferred", "3": "approved"},
}


async def test_a_change_set_hands_resolve_the_counts_of_its_new_head(
    batched: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a backfill of a new enum and after conversions (one with a write landing while the
    change set migrates, which its commit catches up), the counts kept for the new head equal a
    fresh count, and the resolve right after the change set counts nothing: every count is moved
    by the history rows of at most 2 changes here (`max_delta`), so without the counts the change
    set hands over, each Attribute it names would be counted again at that resolve. (`batched`: its
    migration tells its progress after each 10 Records, where the write meanwhile lands.)"""
    vocabulary = importlib.import_module("lorebase_keeper.reads.resolve.vocabulary")
    monkeypatch.setattr(value_counts_module, "_FIRST", 1)
    monkeypatch.setattr(vocabulary._COUNTS, "max_delta", 2)
    counted: list[tuple[str, str]] = []
    fresh_count = StatisticsTxn.value_counts

    async def value_counts(
        self: Any, domain_id: int, branch: str, kind: str, attribute: str, **kw: Any
    ) -> Any:
        counted.append((kind, attribute))
        return await fresh_count(self, domain_id, branch, kind, attribute, **kw)

    monkeypatch.setattr(StatisticsTxn, "value_counts", value_counts)

    async def resolve(text: str) -> list[dict[str, Any]]:
        response = await batched.http.post(
            "/api/v1/domains/supply/resolve",
            json={"text": text, "record_misses": False},
            headers=batched.admin,
        )
        assert response.status_code == 200, response.text
        return [c for c in response.json()["candidates"] if c["target"] == "value"]

    async def kept_equal_fresh() -> dict[str, dict[str, int]]:
        """The kept counts of every Supplier Attribute resolve reads, at the head, taken without a
        count (asserted), against a fresh count; the fresh ones."""
        domain = await batched.rt.domains.on_branch(await batched.rt.domains.get("supply"), "main")
        limits = domain.settings.model.read.resolve
        kind = domain.schema.kinds["Supplier"]
        wanted = {
            ("Supplier", name): most
            for name in kind.attributes
            if (most := values_read(kind, name, limits)) is not None
        }

        async def read(txn):  # type: ignore[no-untyped-def]
            point = await read_point(txn, domain, "main", None)
            incarnation = (domain.row.created_at, point.branch.created_at)
            kept = await KEPT_COUNTS.at_head(
                txn, domain.id, "main", point.chain, point.branch.generation, wanted, incarnation
            )
            assert counted == [], counted  # all kept at this head
            fresh = {
                where: dict(await txn.value_counts(domain.id, "main", *where, limit=max(10 * most, 500)))
                for where, most in wanted.items()
            }
            return kept, fresh

        kept, fresh = await batched.rt.db.read("counts", read)
        for where in wanted:
            assert kept[where] == fresh[where], where
        counted.clear()
        return {name: values for (_, name), values in fresh.items()}

    async def change(body: dict[str, Any]) -> None:
        response = await batched.http.post(CHANGES, json=body, headers=batched.admin)
        assert response.status_code == 200, response.text
        assert response.json()["status"] == "committed", response.json()

    await resolve("active")  # the counts are kept at the head before each change set
    await change({"changes": [BAND]})
    counted.clear()
    found = await resolve("top")
    assert counted == []  # band (new), and every other Attribute, taken as the commit left them
    top = [c for c in found if c["attribute"] == "band" and c["values"] == ["top"]]
    fresh = await kept_equal_fresh()
    assert top and int(top[0]["records"]) == fresh["band"]["top"] > 0

    # A write between (the kept counts move by its history row), and one while it migrates.
    response = await batched.http.post(
        EXECUTE, json={"parameters": {"key": "S-1003", "status": "blocked"}}, headers=batched.admin
    )
    assert response.status_code == 200, response.text
    written: list[str] = []

    async def meanwhile(kind: str, done: int, total: int) -> None:
        if not written:
            written.append(kind)
            answer = await batched.http.post(
                EXECUTE, json={"parameters": {"key": "S-1004", "status": "blocked"}}, headers=batched.admin
            )
            assert answer.status_code == 200, answer.text

    batched.rt.schema_progress.append(meanwhile)
    try:
        await change({"changes": [STATUS_TO_STRING]})
    finally:
        batched.rt.schema_progress.remove(meanwhile)
    assert written  # and caught up at the commit
    counted.clear()
    found = await resolve("suspended")
    assert counted == []
    fresh = await kept_equal_fresh()
    assert fresh["status"]["suspended"] >= 2 and "blocked" not in fresh["status"]
    assert [c for c in found if c["attribute"] == "status" and c["values"] == ["suspended"]]

    await resolve("active")
    await change({"changes": [TIER_TO_ENUM]})
    counted.clear()
    found = await resolve("strategic")
    assert counted == []
    fresh = await kept_equal_fresh()
    assert set(fresh["tier"]) <= {"strategic", "preferred", "approved"} and fresh["tier"]


async def test_a_kind_renamed_away_keeps_no_counts_under_its_old_name(supply: Stack) -> None:
    """A renamed Kind's Records are deleted under its old name and created under the new one (staged
    rows naming every Attribute): its counts under the old name are dropped at the commit, not
    moved, so a Kind added later under the old name counts from nothing, and the new name's are
    those of a fresh count."""
    kept_before = await supply.http.post(
        "/api/v1/domains/supply/resolve",
        json={"text": "blocked", "record_misses": False},
        headers=supply.admin,
    )
    assert kept_before.status_code == 200, kept_before.text
    for changes in (
        [{"op": "rename_kind", "kind": "Supplier", "to": "Vendor"}],
        [
            {
                "op": "add_kind",
                "kind": "Supplier",
                "definition": {
                    "key": ["code"],
                    "attributes": {
                        "code": {"type": "string", "required": True},
                        "status": {"type": "enum", "values": ["active", "blocked"]},
                    },
                },
            }
        ],
    ):
        response = await supply.http.post(CHANGES, json={"changes": changes}, headers=supply.admin)
        assert response.status_code == 200, response.text
    domain = await supply.rt.domains.on_branch(await supply.rt.domains.get("supply"), "main")

    async def read(txn):  # type: ignore[no-untyped-def]
        point = await read_point(txn, domain, "main", None)
        incarnation = (domain.row.created_at, point.branch.created_at)
        wanted = {("Supplier", "status"): 50, ("Vendor", "status"): 50}
        kept = await KEPT_COUNTS.at_head(
            txn, domain.id, "main", point.chain, point.branch.generation, wanted, incarnation
        )
        fresh = {
            where: dict(await txn.value_counts(domain.id, "main", *where, limit=500)) for where in wanted
        }
        return kept, fresh

    kept, fresh = await supply.rt.db.read("counts", read)
    assert fresh[("Supplier", "status")] == {} and fresh[("Vendor", "status")]
    assert kept == fresh
