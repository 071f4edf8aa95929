"""The memory change journal: pages, the fence under concurrent writers, cursor errors, checkpoints and
version 2 prefix-anchored cursors."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.memory_helpers import SCOPE, agent, catch_up, changes, create


async def test_pages_honour_after_through_and_limit(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    empty = (await changes(stack, writer)).json()
    assert empty == {
        "contract_version": 1,
        "journal_id": None,
        "entries": [],
        "high_watermark": None,
        "next_cursor": None,
        "complete": True,
    }
    for i in range(5):
        await create(stack, writer, i)
    first = await changes(stack, writer, limit=2)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    page = first.json()
    assert [e["cursor"]["sequence"] for e in page["entries"]] == [1, 2]
    assert page["high_watermark"]["sequence"] == 5 and page["complete"] is False
    fence = page["high_watermark"]
    await create(stack, writer, "after the fence")
    rest = (await changes(stack, writer, after=page["next_cursor"], through=fence, limit=256)).json()
    assert [e["cursor"]["sequence"] for e in rest["entries"]] == [3, 4, 5]
    assert rest["complete"] is True and rest["next_cursor"]["sequence"] == 5
    caught_up = (await changes(stack, writer, after=rest["next_cursor"], through=fence)).json()
    assert caught_up["entries"] == [] and caught_up["complete"] is True
    polled = (await changes(stack, writer, after=rest["next_cursor"])).json()
    assert [e["cursor"]["sequence"] for e in polled["entries"]] == [6]


async def test_bad_bounds_are_400_and_foreign_cursors_409(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    other_scope = {**SCOPE, "agent_id": "other"}
    other = await agent(stack, "agt_other", agent_id="other")
    await create(stack, writer, "a")
    await create(stack, writer, "b")
    await create(stack, other, "c", scope=other_scope)
    mine = (await changes(stack, writer)).json()["high_watermark"]
    theirs = (await changes(stack, other, scope=other_scope)).json()["high_watermark"]
    for query in (
        {"limit": 0},
        {"limit": 257},
        {"limit": "10"},
        {"after": "opaque"},
        {"after": {"journal_id": mine["journal_id"], "sequence": -1}},
        {"after": {"journal_id": mine["journal_id"], "sequence": 2**64}},
        {"after": {"journal_id": "jrn_../../x", "sequence": 1}},
        {"after": {**mine, "extra": 1}},
        {"after": mine, "through": {**mine, "sequence": 1}},  # after beyond through
    ):
        response = await changes(stack, writer, **query)
        assert response.status_code == 400, (query, response.text)
        assert response.headers["cache-control"] == "no-store"
    bad_version = await stack.http.post(
        "/api/v1/memory/changes", json={"contract_version": 3, "scope": SCOPE}, headers=writer
    )
    assert bad_version.status_code == 400
    foreign = await changes(stack, writer, after=theirs)
    assert foreign.status_code == 409 and foreign.json()["reason"] == "journal_mismatch"
    forged = await changes(stack, writer, after={"journal_id": "jrn_" + "A" * 26, "sequence": 1})
    assert forged.status_code == 409
    ahead = await changes(stack, writer, after={**mine, "sequence": 2**64 - 1})
    assert ahead.status_code == 409 and ahead.json()["reason"] == "ahead_of_journal"
    edited = await changes(stack, writer, 2, after={**mine, "prefix_digest": "0" * 64})
    assert edited.status_code == 409 and edited.json()["reason"] == "history_diverged"
    too_large = await stack.http.post(
        "/api/v1/memory/changes",
        content=b'{"contract_version": 1, "scope": {}, "pad": "' + b"x" * 70000 + b'"}',
        headers={**writer, "content-type": "application/json"},
    )
    assert too_large.status_code == 413


async def test_a_missing_entry_is_500_with_no_partial_page(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    for i in range(3):
        await create(stack, writer, i)
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("delete from memory_journal_entries where sequence = 2"))
    response = await changes(stack, writer)
    assert response.status_code == 500 and response.json()["code"] == "journal-inconsistent"
    assert "entries" not in response.json()


async def test_checkpoints_are_monotonic_and_revision_checked(stack: Stack) -> None:
    consumer = await agent(stack, "agt_consumer")
    for i in range(3):
        await create(stack, consumer, i)
    entries, last = await catch_up(stack, consumer)
    second = entries[1]["cursor"]
    path = "/api/v1/memory/checkpoints/cache-1"
    body: dict[str, Any] = {"contract_version": 1, "scope": SCOPE, "cursor": second, "revision": 0}
    saved = await stack.http.put(path, json=body, headers=consumer)
    assert saved.status_code == 200, saved.text
    assert saved.json()["revision"] == 1 and saved.json()["cursor"]["sequence"] == 2
    concurrent = await stack.http.put(path, json=body, headers=consumer)
    assert concurrent.status_code == 409 and concurrent.json()["code"] == "checkpoint-revision-mismatch"
    older = await stack.http.put(
        path, json={**body, "cursor": entries[0]["cursor"], "revision": 1}, headers=consumer
    )
    assert older.status_code == 409 and older.json()["code"] == "checkpoint-regressed"
    newer = await stack.http.put(path, json={**body, "cursor": last, "revision": 1}, headers=consumer)
    assert newer.status_code == 200 and newer.json()["revision"] == 2
    read = await stack.http.get(path, headers=consumer)
    assert read.status_code == 200 and read.json()["cursor"] == last
    assert (await catch_up(stack, consumer, after=last))[0] == []  # checkpoints add no events
    reader = await agent(stack, "agt_reader", ["memory_read"])
    denied = await stack.http.put(path, json={**body, "revision": 0}, headers=reader)
    assert denied.status_code == 403 and denied.json()["capability"] == "memory_checkpoint"
    assert (await stack.http.get(path, headers=reader)).status_code == 404  # subject-owned


async def test_version_2_cursors_detect_a_divergent_restore(stack: Stack) -> None:
    """A restore is simulated in SQL: the journal's entries above sequence 2 are deleted and its head
    set back to entry 2, as a restore of a backup taken after two writes would leave it; then a
    different write reuses sequence 3. The v2 cursor of the old sequence 3 is refused with 409; a v1
    cursor at 3 is taken at its sequence (version 1 is sequence-only, as the seed says); a cursor at 4
    is ahead of the restored journal, 409 for both versions."""
    writer = await agent(stack, "agt_writer")
    for i in range(4):
        await create(stack, writer, i)
    v2, last_v2 = await catch_up(stack, writer, version=2)
    assert all("prefix_digest" in e["cursor"] for e in v2)
    v1, _ = await catch_up(stack, writer, version=1)
    assert all("prefix_digest" not in e["cursor"] for e in v1)
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("delete from memory_journal_entries where sequence > 2"))
        await conn.execute(
            text(
                "update memory_journals set last_sequence = 2, last_chain = "
                "(select chain_digest from memory_journal_entries where sequence = 2)"
            )
        )
    ahead = await changes(stack, writer, 2, after=last_v2)
    assert ahead.status_code == 409 and ahead.json()["reason"] == "ahead_of_journal"
    await create(stack, writer, "different history")
    diverged = await changes(stack, writer, 2, after=v2[2]["cursor"])
    assert diverged.status_code == 409 and diverged.json()["reason"] == "history_diverged"
    assert "reconcile" in diverged.json()["detail"]
    same_prefix = await changes(stack, writer, 2, after=v2[1]["cursor"])
    assert same_prefix.status_code == 200 and len(same_prefix.json()["entries"]) == 1
    sequence_only = await changes(stack, writer, 1, after=v1[2]["cursor"])
    assert sequence_only.status_code == 200 and sequence_only.json()["entries"] == []
    assert (await changes(stack, writer, 1, after=v1[3]["cursor"])).status_code == 409


_WRITERS: dict[int, list[dict[str, str]]] = {}


async def _write_concurrently(stack: Stack, writers: list[dict[str, str]], count: int) -> int:
    async def one(headers: dict[str, str], i: int) -> None:
        await create(stack, headers, i)

    await asyncio.gather(*(one(writers[i % len(writers)], i) for i in range(count)))
    return count


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
async def test_catch_up_under_concurrent_writers_sees_each_entry_once(
    stack: Stack, data: st.DataObject
) -> None:
    """Consumers following the protocol with random page sizes, while writers commit, see every
    entry up to their fence exactly once, in sequence order, and nothing above the fence."""
    if id(stack) not in _WRITERS:  # one stack serves every example of a run
        _WRITERS.clear()
        _WRITERS[id(stack)] = [await agent(stack, f"agt_w{i}") for i in range(3)]
    writers = _WRITERS[id(stack)]
    limit = data.draw(st.integers(1, 256))
    burst = data.draw(st.integers(1, 12))
    before = (await changes(stack, writers[0])).json()["high_watermark"]
    start = before["sequence"] if before else 0
    writing = asyncio.create_task(_write_concurrently(stack, writers, burst))
    seen, after = await catch_up(stack, writers[0], after=before, limit=limit)
    await writing
    sequences = [e["cursor"]["sequence"] for e in seen]
    assert sequences == list(range(start + 1, start + 1 + len(sequences)))
    rest, _ = await catch_up(stack, writers[0], after=after, limit=limit)
    assert [e["cursor"]["sequence"] for e in seen + rest] == list(range(start + 1, start + burst + 1))
    retry = await stack.http.post(
        "/api/v1/memory/records",
        json={"scope": SCOPE, "content": 1, "idempotency_key": "fixed"},
        headers=writers[0],
    )
    assert retry.status_code == 201
    high = (await changes(stack, writers[0])).json()["high_watermark"]["sequence"]
    assert high == start + burst + (0 if retry.headers.get("idempotent-replayed") else 1)


async def test_checkpoints_are_listed_and_deleted_by_their_subject(stack: Stack) -> None:
    consumer = await agent(stack, "agt_consumer")
    other_scope = {**SCOPE, "agent_id": "other"}
    await agent(stack, "agt_consumer", agent_id="other")
    await create(stack, consumer, "a")
    await create(stack, consumer, "b", scope=other_scope)
    mine = (await changes(stack, consumer)).json()["high_watermark"]
    theirs = (await changes(stack, consumer, scope=other_scope)).json()["high_watermark"]
    for name, scope, cursor in (("c-1", SCOPE, mine), ("c-2", other_scope, theirs), ("c-3", SCOPE, mine)):
        body = {"contract_version": 1, "scope": scope, "cursor": cursor, "revision": 0}
        saved = await stack.http.put(f"/api/v1/memory/checkpoints/{name}", json=body, headers=consumer)
        assert saved.status_code == 200, saved.text
    listed = await stack.http.get("/api/v1/memory/checkpoints", headers=consumer)
    assert listed.status_code == 200 and listed.headers["cache-control"] == "no-store"
    assert [c["consumer"] for c in listed.json()["checkpoints"]] == ["c-1", "c-2", "c-3"]
    assert listed.json()["next_after"] is None
    first = (await stack.http.get("/api/v1/memory/checkpoints?limit=2", headers=consumer)).json()
    assert [c["consumer"] for c in first["checkpoints"]] == ["c-1", "c-2"] and first["next_after"] == "c-2"
    rest = (await stack.http.get("/api/v1/memory/checkpoints?limit=2&after=c-2", headers=consumer)).json()
    assert [c["consumer"] for c in rest["checkpoints"]] == ["c-3"] and rest["next_after"] is None
    for bad in ("limit=0", "limit=257", "limit=x", "after=..", "cursor=1"):
        response = await stack.http.get(f"/api/v1/memory/checkpoints?{bad}", headers=consumer)
        assert response.status_code == 400, (bad, response.text)
    # Another subject sees none of them and cannot delete them.
    stranger = await agent(stack, "agt_stranger")
    assert (await stack.http.get("/api/v1/memory/checkpoints", headers=stranger)).json()["checkpoints"] == []
    assert (await stack.http.delete("/api/v1/memory/checkpoints/c-1", headers=stranger)).status_code == 404

    stale = await stack.http.request(
        "DELETE", "/api/v1/memory/checkpoints/c-1", json={"revision": 2}, headers=consumer
    )
    assert stale.status_code == 409 and stale.json()["code"] == "checkpoint-revision-mismatch"
    mistyped = await stack.http.request(
        "DELETE", "/api/v1/memory/checkpoints/c-1", json={"revision": "1"}, headers=consumer
    )
    assert mistyped.status_code == 400
    deleted = await stack.http.request(
        "DELETE", "/api/v1/memory/checkpoints/c-1", json={"revision": 1}, headers=consumer
    )
    assert deleted.status_code == 200 and deleted.json() == {
        "consumer": "c-1",
        "deleted": True,
        "revision": 1,
    }
    assert (await stack.http.get("/api/v1/memory/checkpoints/c-1", headers=consumer)).status_code == 404
    assert (await stack.http.delete("/api/v1/memory/checkpoints/c-1", headers=consumer)).status_code == 404
    assert (await stack.http.delete("/api/v1/memory/checkpoints/c-3", headers=consumer)).status_code == 200
    # Deleted, a name starts over at revision 0.
    body = {"contract_version": 1, "scope": SCOPE, "cursor": mine, "revision": 0}
    again = await stack.http.put("/api/v1/memory/checkpoints/c-1", json=body, headers=consumer)
    assert again.status_code == 200 and again.json()["revision"] == 1

    # Without the capability on its scope a checkpoint is neither listed nor deletable.
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(
            text("delete from memory_grants where principal_id = 'agt_consumer' and agent_id = 'other'")
        )
    listed = (await stack.http.get("/api/v1/memory/checkpoints", headers=consumer)).json()
    assert [c["consumer"] for c in listed["checkpoints"]] == ["c-1"]
    denied = await stack.http.delete("/api/v1/memory/checkpoints/c-2", headers=consumer)
    assert denied.status_code == 403 and denied.json()["capability"] == "memory_read"
    assert await stack.count("memory_journal_entries") == 2  # checkpoints add no events


async def test_a_checkpoint_name_with_a_final_newline_is_refused(stack: Stack) -> None:
    consumer = await agent(stack, "agt_newline")
    entries, last = await catch_up(stack, consumer)
    body: dict[str, Any] = {"contract_version": 1, "scope": SCOPE, "cursor": last, "revision": 0}
    for name in ("cache%0A", "cache%0D%0A", "%0Acache"):
        saved = await stack.http.put(f"/api/v1/memory/checkpoints/{name}", json=body, headers=consumer)
        assert saved.status_code == 400, saved.text
        assert saved.json()["parameter"] == "consumer"
    listed = await stack.http.get("/api/v1/memory/checkpoints?after=cache%0A", headers=consumer)
    assert listed.status_code == 400, listed.text


async def test_a_missing_entry_at_the_start_of_a_page_is_500(stack: Stack) -> None:
    """The entry a page starts after is read in the page's statement: gone, the page is refused."""
    writer = await agent(stack, "agt_writer")
    for i in range(4):
        await create(stack, writer, i)
    first = await changes(stack, writer, limit=2)
    assert first.status_code == 200, first.text
    after = first.json()["next_cursor"]
    assert after["sequence"] == 2
    async with stack.rt.db.engine.begin() as conn:
        await conn.execute(text("delete from memory_journal_entries where sequence = 2"))
    response = await changes(stack, writer, after=after)
    assert response.status_code == 500 and response.json()["code"] == "journal-inconsistent"
    assert "entries" not in response.json()
