"""Memory commands committed in groups (lorebase_keeper.memory.commit): what many writers of one scope
at once see, and what the journal holds afterwards."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import httpx
import msgspec
from lorebase_keeper import memory
from sqlalchemy import text

from lorebase.contract.memory import NewMemory
from lorebase.memory import Scope
from lorebase.memory.access import MemoryCaller
from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.memory_helpers import SCOPE, agent, catch_up, changes, create, key


async def _post(stack: Stack, headers: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return await stack.http.post("/api/v1/memory/records", json=body, headers=headers)


def _sequences(entries: list[dict[str, Any]]) -> list[int]:
    return [e["cursor"]["sequence"] for e in entries]


async def test_concurrent_creates_in_one_scope_make_one_gapless_journal(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    answers = await asyncio.gather(
        *(
            _post(stack, writer, {"scope": SCOPE, "content": {"n": i}, "idempotency_key": key()})
            for i in range(48)
        )
    )
    assert [a.status_code for a in answers] == [201] * 48
    made = {a.json()["record"]["record_id"]: a.json()["change"]["cursor"]["sequence"] for a in answers}
    assert len(made) == 48 and sorted(made.values()) == list(range(1, 49))
    # Version 2 pages check the hash chain over every entry: a gap or a reordering would be a 500.
    entries, last = await catch_up(stack, writer, version=2, limit=7)
    assert _sequences(entries) == list(range(1, 49)) and last["sequence"] == 48
    assert [e["kind"] for e in entries] == ["created"] * 48
    assert {e["record_id"]: e["cursor"]["sequence"] for e in entries} == made  # each exactly once
    committed = [e["committed_at_millis"] for e in entries]
    assert committed == sorted(committed)
    assert await stack.count("memory_records") == await stack.count("memory_receipts") == 48


async def test_commands_queued_together_commit_in_one_transaction(stack: Stack) -> None:
    caller = MemoryCaller("usr_admin", "default")
    digest = hashlib.sha256(ADMIN_KEY.encode()).hexdigest()
    commands = [
        memory.command_of(
            "create",
            msgspec.convert({"scope": SCOPE, "content": i, "idempotency_key": key()}, NewMemory),
            None,
            "",
            32768,
        )
        for i in range(20)
    ]
    before = len(stack.rt.db.timings.get("memory_commands", []))
    outcomes = await asyncio.gather(*(stack.rt.memory.run(caller, c, digest) for c in commands))
    assert len(stack.rt.db.timings["memory_commands"]) == before + 1  # 20 commands, one transaction
    assert sorted(o.document["change"]["cursor"]["sequence"] for o in outcomes) == list(range(1, 21))


async def test_identical_retries_sent_together_create_one_record(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    body = {"scope": SCOPE, "content": "once", "idempotency_key": "same-key"}
    answers = await asyncio.gather(*(_post(stack, writer, body) for _ in range(6)))
    assert [a.status_code for a in answers] == [201] * 6
    assert len({a.json()["record"]["record_id"] for a in answers}) == 1
    assert sorted(a.headers.get("idempotent-replayed", "false") for a in answers) == ["false"] + ["true"] * 5
    entries, _ = await catch_up(stack, writer)
    assert _sequences(entries) == [1]
    assert await stack.count("memory_receipts") == 1


async def test_conflicting_updates_sent_together_let_exactly_one_win(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    rid = (await create(stack, writer, "v1"))["record"]["record_id"]
    keys = [key() for _ in range(8)]
    answers = await asyncio.gather(
        *(
            stack.http.patch(
                f"/api/v1/memory/records/{rid}",
                json={"record_revision": 1, "content": f"by {k}", "idempotency_key": k},
                headers=writer,
            )
            for k in keys
        )
    )
    codes = [a.status_code for a in answers]
    assert sorted(codes) == [200] + [409] * 7
    winner = answers[codes.index(200)].json()
    assert winner["record"]["record_revision"] == 2
    for lost in (a for a in answers if a.status_code == 409):
        assert lost.json()["code"] == "record-revision-mismatch" and lost.json()["record_revision"] == 2
    read = (await stack.http.get(f"/api/v1/memory/records/{rid}", headers=writer)).json()
    assert read["record_revision"] == 2 and read["content"] == winner["record"]["content"]
    entries, _ = await catch_up(stack, writer)
    assert [(e["kind"], e["record_revision"]) for e in entries] == [("created", 1), ("updated", 2)]
    # A refused command leaves no receipt: its key may be used again, with the current revision.
    loser = keys[codes.index(409)]
    retried = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 2, "content": "after reading again", "idempotency_key": loser},
        headers=writer,
    )
    assert retried.status_code == 200 and retried.json()["record"]["record_revision"] == 3


async def test_refused_commands_leave_the_others_of_their_group_intact(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    reader = await agent(stack, "agt_reader", ["memory_read"])
    gone = (await create(stack, writer, "to delete"))["record"]["record_id"]
    deleted = await stack.http.request(
        "DELETE", f"/api/v1/memory/records/{gone}", headers={**writer, "Idempotency-Key": key()}
    )
    assert deleted.status_code == 200
    reader_keys = [key() for _ in range(4)]
    requests = [
        _post(stack, writer, {"scope": SCOPE, "content": i, "idempotency_key": key()}) for i in range(8)
    ]
    requests += [
        _post(stack, reader, {"scope": SCOPE, "content": "no", "idempotency_key": k}) for k in reader_keys
    ]
    requests += [
        stack.http.patch(
            f"/api/v1/memory/records/{gone}",
            json={"record_revision": 2, "content": "too late", "idempotency_key": key()},
            headers=writer,
        )
        for _ in range(3)
    ]
    answers = await asyncio.gather(*requests)
    assert [a.status_code for a in answers] == [201] * 8 + [403] * 4 + [409] * 3
    assert {a.json()["code"] for a in answers[8:12]} == {"forbidden"}
    assert {a.json()["code"] for a in answers[12:]} == {"memory-deleted"}
    entries, _ = await catch_up(stack, writer)
    assert _sequences(entries) == list(range(1, 11))  # the create, the delete, the 8 accepted creates
    created = {a.json()["record"]["record_id"] for a in answers[:8]}
    assert {e["record_id"] for e in entries[2:]} == created
    # The refused creates left no receipt: with a grant, their keys create.
    await agent(stack, "agt_reader")
    retried = await _post(stack, reader, {"scope": SCOPE, "content": "no", "idempotency_key": reader_keys[0]})
    assert retried.status_code == 201 and retried.json()["change"]["cursor"]["sequence"] == 11


async def test_one_key_used_in_two_journals_at_once_is_one_command(stack: Stack) -> None:
    other_scope = {**SCOPE, "agent_id": "other"}
    writer = await agent(stack, "agt_writer")
    await agent(stack, "agt_writer", agent_id="other")
    accepted = 0
    for round_ in range(6):
        shared_key = f"both-{round_}"
        answers = await asyncio.gather(
            _post(stack, writer, {"scope": SCOPE, "content": round_, "idempotency_key": shared_key}),
            _post(stack, writer, {"scope": other_scope, "content": round_, "idempotency_key": shared_key}),
        )
        assert sorted(a.status_code for a in answers) == [201, 422], [a.text for a in answers]
        assert next(a for a in answers if a.status_code == 422).json()["code"] == "idempotency-key-reused"
        accepted += 1
    mine = (await changes(stack, writer, limit=256)).json()["entries"]
    theirs = (await changes(stack, writer, scope=other_scope, limit=256)).json()["entries"]
    assert _sequences(mine) == list(range(1, len(mine) + 1))
    assert _sequences(theirs) == list(range(1, len(theirs) + 1))
    assert len(mine) + len(theirs) == accepted
    assert await stack.count("memory_records") == await stack.count("memory_receipts") == accepted


async def test_a_revoked_key_stops_the_next_command(stack: Stack) -> None:
    await stack.principal("agt_writer", type="service")
    issued = await stack.http.post("/api/v1/principals/agt_writer/keys", headers=stack.admin)
    writer = {"Authorization": f"Bearer {issued.json()['key']}"}
    await agent(stack, "agt_writer")
    rid = (await create(stack, writer, "before"))["record"]["record_id"]  # keeper now knows the key
    revoked = await stack.http.delete(
        f"/api/v1/principals/agt_writer/keys/{issued.json()['id']}", headers=stack.admin
    )
    assert revoked.status_code == 200, revoked.text
    again = await _post(stack, writer, {"scope": SCOPE, "content": "after", "idempotency_key": key()})
    assert again.status_code == 401 and again.json()["code"] == "unauthenticated"
    bad_body = await _post(stack, writer, {"scope": SCOPE, "content": None})
    assert bad_body.status_code == 401  # the credential is checked before the body
    update = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 1, "content": "after", "idempotency_key": key()},
        headers=writer,
    )
    assert update.status_code == 401
    assert await stack.count("memory_journal_entries") == await stack.count("memory_receipts") == 1


async def test_a_refused_first_write_creates_no_journal(stack: Stack) -> None:
    reader = await agent(stack, "agt_reader", ["memory_read"])
    denied = await _post(stack, reader, {"scope": SCOPE, "content": "x", "idempotency_key": key()})
    assert denied.status_code == 403
    page = (await changes(stack, reader)).json()
    assert page["journal_id"] is None and page["high_watermark"] is None
    assert await stack.count("memory_journals") == 0


async def test_a_command_queued_under_a_stale_namespace_runs_in_its_records_journal(stack: Stack) -> None:
    """Keeper remembers each record's namespace to queue its commands; should the database disagree
    (a restore), the command is read again and runs in the group of the record's own journal."""
    writer = await agent(stack, "agt_writer")
    await agent(stack, "agt_writer", agent_id="other")
    rid = (await create(stack, writer, "here"))["record"]["record_id"]
    await create(stack, writer, "there", scope={**SCOPE, "agent_id": "other"})
    elsewhere = Scope("proj", None, "other", "shared").namespace("default", "agt_writer")
    stack.rt.memory._namespaces[rid] = elsewhere
    updated = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 1, "content": "moved on", "idempotency_key": key()},
        headers=writer,
    )
    assert updated.status_code == 200, updated.text
    entries, _ = await catch_up(stack, writer)
    assert [(e["kind"], e["record_id"]) for e in entries] == [("created", rid), ("updated", rid)]
    other = (await changes(stack, writer, scope={**SCOPE, "agent_id": "other"})).json()["entries"]
    assert [e["kind"] for e in other] == ["created"]


async def _waiting_on_a_lock(stack: Stack, query_part: str) -> None:
    """Until a backend waits for a lock in a statement that contains `query_part`."""
    async with stack.rt.db.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")  # a fresh view each time
        for _ in range(2000):
            waiting = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND strpos(query, :part) > 0"
                ),
                {"part": query_part},
            )
            if waiting:
                return
            await asyncio.sleep(0.01)
    raise AssertionError("no statement waited for the lock")


async def test_a_group_whose_lock_waited_reads_the_state_the_other_group_left(stack: Stack) -> None:
    """A group reads its records in the statement that locks the journal, in a snapshot taken before
    the lock is granted. When another group (another keeper process) held the lock and committed a
    change of the record meanwhile, the journal's last_sequence moved: the group reads again and
    plans against the record's current revision."""
    writer = await agent(stack, "agt_writer")
    rid = (await create(stack, writer, "v1"))["record"]["record_id"]
    async with stack.rt.db.engine.connect() as other:  # the other keeper's group, holding the lock
        await other.begin()
        await other.execute(
            text("SELECT 1 FROM memory_journals WHERE last_sequence = 1 FOR UPDATE"),
        )
        update = asyncio.ensure_future(
            stack.http.patch(
                f"/api/v1/memory/records/{rid}",
                json={"record_revision": 1, "content": "stale", "idempotency_key": key()},
                headers=writer,
            )
        )
        await _waiting_on_a_lock(stack, "FOR UPDATE")
        await other.execute(
            text(
                "UPDATE memory_records SET record_revision = 2, content = CAST('\"theirs\"' AS jsonb)"
                " WHERE id = :rid"
            ),
            {"rid": rid},
        )
        await other.execute(text("UPDATE memory_journals SET last_sequence = 2"))
        await other.commit()
        answer = await update
    assert answer.status_code == 409, answer.text
    assert answer.json()["code"] == "record-revision-mismatch" and answer.json()["record_revision"] == 2
    read = (await stack.http.get(f"/api/v1/memory/records/{rid}", headers=writer)).json()
    assert read["record_revision"] == 2 and read["content"] == "theirs"


async def test_a_group_whose_lock_waited_for_nothing_written_uses_what_it_read(stack: Stack) -> None:
    """The lock waited, but the holder wrote nothing (it rolled back): the state read with the lock
    is current, and the command commits against it."""
    writer = await agent(stack, "agt_writer")
    rid = (await create(stack, writer, "v1"))["record"]["record_id"]
    async with stack.rt.db.engine.connect() as other:
        await other.begin()
        await other.execute(text("SELECT 1 FROM memory_journals FOR UPDATE"))
        update = asyncio.ensure_future(
            stack.http.patch(
                f"/api/v1/memory/records/{rid}",
                json={"record_revision": 1, "content": "mine", "idempotency_key": key()},
                headers=writer,
            )
        )
        await _waiting_on_a_lock(stack, "FOR UPDATE")
        await other.rollback()
        answer = await update
    assert answer.status_code == 200, answer.text
    assert answer.json()["record"]["record_revision"] == 2
    entries, _ = await catch_up(stack, writer, version=2)
    assert [(e["kind"], e["record_revision"]) for e in entries] == [("created", 1), ("updated", 2)]
