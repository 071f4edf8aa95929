"""A real backup and restore of the memory journal: `pg_dump` of the stack's database, more writes,
`pg_restore` of the dump into a new database, a stack pointed at it, and different writes there.

Version 2 cursors of the lost history are refused with 409 `history_diverged` (the detail tells the
consumer to reconcile); cursors beyond the restored journal are 409 `ahead_of_journal` for both
versions; a version 1 cursor at a reused sequence is accepted, as the seed says (sequence-only).
The PostgreSQL client programs are those of the embedded PostgreSQL wheel.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from lorebase.embedded import create_database, drop_database, postgres_bin_dir
from tests.conftest import database_name
from tests.integration.conftest import Stack, open_stack
from tests.integration.memory_helpers import SCOPE, agent, catch_up, changes, create


async def _run(*command: str | Path) -> None:
    result = await asyncio.to_thread(
        subprocess.run, [str(c) for c in command], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{command[0]} failed: {result.stderr}"


async def _query_all(stack: Stack, headers: dict[str, str]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    cursor = None
    while True:
        response = await stack.http.post(
            "/api/v1/memory/query", json={"scope": SCOPE, "limit": 2, "cursor": cursor}, headers=headers
        )
        assert response.status_code == 200, response.text
        records += response.json()["records"]
        cursor = response.json()["next_cursor"]
        if cursor is None:
            return records


async def test_a_restored_dump_refuses_v2_cursors_of_the_lost_history(
    stack: Stack, postgres_url: str, tmp_path: Path
) -> None:
    bin_dir = postgres_bin_dir()
    writer = await agent(stack, "agt_writer")
    kept = [(await create(stack, writer, f"kept {i}"))["record"]["record_id"] for i in range(2)]
    dump = tmp_path / "lorebase.dump"
    await _run(bin_dir / "pg_dump", "--format=custom", "--no-owner", "--file", dump, stack.database_url)

    lost = [(await create(stack, writer, f"lost {i}"))["record"]["record_id"] for i in range(2)]
    v2, last_v2 = await catch_up(stack, writer, version=2)
    v1, last_v1 = await catch_up(stack, writer, version=1)
    assert [e["cursor"]["sequence"] for e in v2] == [1, 2, 3, 4]
    checkpoint = {"contract_version": 2, "scope": SCOPE, "cursor": v2[2]["cursor"], "revision": 0}
    saved = await stack.http.put("/api/v1/memory/checkpoints/cache", json=checkpoint, headers=writer)
    assert saved.status_code == 200, saved.text

    restored_name = f"{database_name(stack.database_url)}_restored"
    restored_url = await create_database(postgres_url, restored_name)
    try:
        await _run(bin_dir / "pg_restore", "--no-owner", "--exit-on-error", "--dbname", restored_url, dump)
        async with open_stack(restored_url) as restored:
            # Before any new write: the cursors of the lost entries are ahead of the journal.
            for version, cursor in ((2, last_v2), (1, last_v1)):
                ahead = await changes(restored, writer, version, after=cursor)
                assert ahead.status_code == 409 and ahead.json()["reason"] == "ahead_of_journal"
            lost_read = await restored.http.get(f"/api/v1/memory/records/{lost[0]}", headers=writer)
            assert lost_read.status_code == 404
            # The checkpoint saved after the dump is gone with it.
            gone = await restored.http.get("/api/v1/memory/checkpoints/cache", headers=writer)
            assert gone.status_code == 404

            other = await create(restored, writer, "a different third write")
            assert other["change"]["cursor"]["sequence"] == 3
            assert other["change"]["cursor"]["journal_id"] == v2[0]["cursor"]["journal_id"]

            diverged = await changes(restored, writer, 2, after=v2[2]["cursor"])
            assert diverged.status_code == 409, diverged.text
            assert diverged.json()["code"] == "cursor-diverged"
            assert diverged.json()["reason"] == "history_diverged"
            assert "reconcile" in diverged.json()["detail"]
            fenced = await changes(restored, writer, 2, after=v2[0]["cursor"], through=v2[2]["cursor"])
            assert fenced.status_code == 409 and fenced.json()["reason"] == "history_diverged"
            resave = await restored.http.put(
                "/api/v1/memory/checkpoints/cache", json=checkpoint, headers=writer
            )
            assert resave.status_code == 409 and resave.json()["reason"] == "history_diverged"
            # A v2 cursor of the common prefix still reads on, into the new history.
            common = await changes(restored, writer, 2, after=v2[1]["cursor"])
            assert common.status_code == 200, common.text
            assert [e["record_id"] for e in common.json()["entries"]] == [other["record"]["record_id"]]

            # Version 1 is sequence-only: the old cursor at 3 is taken at its sequence and skips the
            # new entry 3; a cursor at 4 is still ahead.
            sequence_only = await changes(restored, writer, 1, after=v1[2]["cursor"])
            assert sequence_only.status_code == 200, sequence_only.text
            assert sequence_only.json()["entries"] == [] and sequence_only.json()["complete"] is True
            still_ahead = await changes(restored, writer, 1, after=v1[3]["cursor"])
            assert still_ahead.status_code == 409 and still_ahead.json()["reason"] == "ahead_of_journal"

            # Reconciling as the 409 says: capture the watermark, scan, consume after it.
            watermark = (await changes(restored, writer, 2)).json()["high_watermark"]
            assert watermark["sequence"] == 3
            scanned = [r["record_id"] for r in await _query_all(restored, writer)]
            assert scanned == [*kept, other["record"]["record_id"]]
            assert (await catch_up(restored, writer, after=watermark, version=2))[0] == []
            later = await create(restored, writer, "after reconciling")
            entries, _ = await catch_up(restored, writer, after=watermark, version=2)
            assert [e["record_id"] for e in entries] == [later["record"]["record_id"]]
    finally:
        await drop_database(postgres_url, restored_name)
