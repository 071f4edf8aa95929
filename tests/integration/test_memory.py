"""Agent memory records: each command, its errors, idempotent retries and what reaches the journal."""

from __future__ import annotations

from tests.integration.conftest import Stack
from tests.integration.memory_helpers import SCOPE, agent, catch_up, changes, create, key


async def test_commands_reach_the_journal_in_order(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    first = await create(stack, writer, {"fact": "Kavsen ships from Poznan"})
    record = first["record"]
    assert record["record_revision"] == 1 and record["status"] == "active"
    assert first["change"]["kind"] == "created"
    rid = record["record_id"]
    second = await create(stack, writer, "other")
    derived = await stack.http.post(
        "/api/v1/memory/derivations",
        json={
            "scope": SCOPE,
            "content": "summary",
            "derived_from": [rid, second["record"]["record_id"]],
            "idempotency_key": key(),
        },
        headers=writer,
    )
    assert derived.status_code == 201, derived.text
    assert derived.json()["record"]["derived_from"] == [rid, second["record"]["record_id"]]
    updated = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 1, "content": {"fact": "moved"}, "idempotency_key": key()},
        headers=writer,
    )
    assert updated.status_code == 200 and updated.json()["record"]["record_revision"] == 2
    embedded = await stack.http.put(
        f"/api/v1/memory/records/{rid}/embedding",
        json={"record_revision": 2, "model": "mini", "vector": [0.1, 0.2], "idempotency_key": key()},
        headers=writer,
    )
    assert embedded.status_code == 200, embedded.text
    assert embedded.json()["record"]["record_revision"] == 2  # an embedding does not bump the revision
    assert embedded.json()["record"]["embedding"]["record_revision"] == 2
    again = await stack.http.put(
        f"/api/v1/memory/records/{rid}/embedding",
        json={"record_revision": 2, "model": "mini", "vector": [0.1, 0.2], "idempotency_key": key()},
        headers=writer,
    )
    assert again.status_code == 200 and again.json()["change"] is None  # identical binding: no event
    reviewed = await stack.http.post(
        f"/api/v1/memory/records/{rid}/reviews",
        json={"decision": "approve", "reason": "checked against the contract", "idempotency_key": key()},
        headers=writer,
    )
    assert reviewed.status_code == 200, reviewed.text
    assert reviewed.json()["record"]["review"]["decision"] == "approve"
    deleted = await stack.http.request(
        "DELETE",
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 2},
        headers={**writer, "Idempotency-Key": key()},
    )
    assert deleted.status_code == 200, deleted.text
    read = await stack.http.get(f"/api/v1/memory/records/{rid}", headers=writer)
    assert read.status_code == 200
    assert read.json()["status"] == "deleted" and read.json()["content"] is None  # metadata stays readable
    assert read.headers["cache-control"] == "no-store"

    entries, _ = await catch_up(stack, writer)
    assert [e["kind"] for e in entries] == [
        "created",
        "created",
        "derived",
        "updated",
        "embedding_attached",
        "reviewed",
        "deleted",
    ]
    assert [e["cursor"]["sequence"] for e in entries] == list(range(1, 8))
    assert {e["cursor"]["journal_id"] for e in entries} == {first["change"]["cursor"]["journal_id"]}
    embedding = entries[4]
    assert embedding["record_id"] == rid and embedding["record_revision"] == 2
    assert entries[6]["record_revision"] == 3 and entries[6]["author"] == "agt_writer"
    for entry in entries:
        assert set(entry) == {
            "schema_version",
            "cursor",
            "kind",
            "record_id",
            "record_revision",
            "author",
            "committed_at_millis",
            "change_digest",
        }
    assert await stack.count("memory_receipts") == 8
    assert await stack.count("memory_integrity") == 3


async def test_retries_replay_the_receipt_and_add_no_event(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    body = {"scope": SCOPE, "content": "once", "idempotency_key": "create-1"}
    first = await stack.http.post("/api/v1/memory/records", json=body, headers=writer)
    retry = await stack.http.post("/api/v1/memory/records", json=body, headers=writer)
    assert first.status_code == retry.status_code == 201
    assert retry.headers["idempotent-replayed"] == "true"
    assert retry.json()["record"] == first.json()["record"]
    other = await stack.http.post(
        "/api/v1/memory/records", json={**body, "content": "different"}, headers=writer
    )
    assert other.status_code == 422 and other.json()["code"] == "idempotency-key-reused"
    rid = first.json()["record"]["record_id"]
    elsewhere = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 1, "content": "x", "idempotency_key": "create-1"},
        headers=writer,
    )
    assert elsewhere.status_code == 422 and elsewhere.json()["code"] == "idempotency-key-reused"
    entries, _ = await catch_up(stack, writer)
    assert len(entries) == 1


async def test_conflicts_and_bad_input_do_not_advance_the_journal(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    rid = (await create(stack, writer))["record"]["record_id"]
    stale = await stack.http.patch(
        f"/api/v1/memory/records/{rid}",
        json={"record_revision": 7, "content": "x", "idempotency_key": key()},
        headers=writer,
    )
    assert stale.status_code == 409 and stale.json()["code"] == "record-revision-mismatch"
    assert stale.json()["record_revision"] == 1
    bad = await stack.http.post(
        "/api/v1/memory/records",
        json={"scope": {**SCOPE, "visibility": "team"}, "content": None},
        headers=writer,
    )
    # The body's model is checked first (at the edge, and again in keeper): each member that does
    # not fit is an issue; then keeper's rules across members and settings, after the credential.
    assert bad.status_code == 422 and bad.json()["code"] == "validation-failed"
    assert [i["path"] for i in bad.json()["issues"]] == ["scope.visibility"]
    unkeyed = await stack.http.post(
        "/api/v1/memory/records", json={"scope": SCOPE, "content": None}, headers=writer
    )
    assert unkeyed.status_code == 422 and unkeyed.json()["code"] == "validation-failed"
    assert {i["path"] for i in unkeyed.json()["issues"]} == {"content", "idempotency_key"}
    for body in (
        {"scope": SCOPE, "content": 1, "idempotency_key": key(), "extra": 1},
        {"scope": {**SCOPE, "project_id": "-x"}, "content": 1, "idempotency_key": key()},
        {"scope": SCOPE, "content": 1, "idempotency_key": key(), "valid_until_millis": -1},
        {"scope": SCOPE, "content": 1, "idempotency_key": key(), "valid_until_millis": 2**63},
        {"scope": SCOPE, "content": 2**64, "idempotency_key": key()},  # no JSON column holds it
    ):
        refused = await stack.http.post("/api/v1/memory/records", json=body, headers=writer)
        assert refused.status_code == 422, (body, refused.text)
    duplicated = await stack.http.post(
        "/api/v1/memory/derivations",
        json={"scope": SCOPE, "content": 1, "derived_from": [rid, rid], "idempotency_key": key()},
        headers=writer,
    )
    assert duplicated.status_code == 422 and duplicated.json()["issues"][0]["path"] == "derived_from"
    unchanged = await stack.http.patch(
        f"/api/v1/memory/records/{rid}", json={"record_revision": 1, "idempotency_key": key()}, headers=writer
    )
    assert unchanged.status_code == 422 and unchanged.json()["issues"][0]["path"] == "content"
    embed = await stack.http.put(
        f"/api/v1/memory/records/{rid}/embedding",
        json={"record_revision": 1, "model": "m", "vector": [], "idempotency_key": key()},
        headers=writer,
    )
    assert embed.status_code == 422
    missing = await stack.http.patch(
        "/api/v1/memory/records/mem_nope",
        json={"record_revision": 1, "content": "x", "idempotency_key": key()},
        headers=writer,
    )
    assert missing.status_code == 404
    too_large = await stack.http.post(
        "/api/v1/memory/records",
        json={"scope": SCOPE, "content": "x" * 70000, "idempotency_key": key()},
        headers=writer,
    )
    assert too_large.status_code == 413
    entries, _ = await catch_up(stack, writer)
    assert len(entries) == 1


async def test_expiry_is_clock_driven_and_writes_no_entry(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    expired = await create(stack, writer, "old", valid_until_millis=1)
    live = await create(stack, writer, "new", valid_until_millis=2**62)
    assert expired["record"]["status"] == "expired" and expired["record"]["content"] is None
    query = await stack.http.post("/api/v1/memory/query", json={"scope": SCOPE}, headers=writer)
    assert [r["record_id"] for r in query.json()["records"]] == [live["record"]["record_id"]]
    everything = await stack.http.post(
        "/api/v1/memory/query", json={"scope": SCOPE, "include_unavailable": True}, headers=writer
    )
    assert len(everything.json()["records"]) == 2
    entries, _ = await catch_up(stack, writer)
    assert [e["kind"] for e in entries] == ["created", "created"]


async def test_query_pages_through_a_scope(stack: Stack) -> None:
    writer = await agent(stack, "agt_writer")
    made = [(await create(stack, writer, i))["record"]["record_id"] for i in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        response = await stack.http.post(
            "/api/v1/memory/query", json={"scope": SCOPE, "limit": 2, "cursor": cursor}, headers=writer
        )
        assert response.status_code == 200, response.text
        seen += [r["record_id"] for r in response.json()["records"]]
        cursor = response.json()["next_cursor"]
        if cursor is None:
            break
    assert seen == made


async def test_private_records_and_scopes_are_isolated(stack: Stack) -> None:
    alice = await agent(stack, "agt_alice")
    bob = await agent(stack, "agt_bob")
    private = {**SCOPE, "visibility": "private"}
    mine = await create(stack, alice, "secret", scope=private)
    rid = mine["record"]["record_id"]
    assert (await stack.http.get(f"/api/v1/memory/records/{rid}", headers=bob)).status_code == 404
    bobs = await stack.http.post("/api/v1/memory/query", json={"scope": private}, headers=bob)
    assert bobs.status_code == 200 and bobs.json()["records"] == []
    page = (await changes(stack, bob, scope=private)).json()
    assert page["entries"] == [] and page["high_watermark"] is None
    outsider = await stack.principal("agt_outsider", type="service")
    assert (await changes(stack, outsider)).status_code == 403
    assert (
        await stack.http.post("/api/v1/memory/query", json={"scope": SCOPE}, headers=outsider)
    ).status_code == 403
    reader = await agent(stack, "agt_reader", ["memory_read"])
    denied = await stack.http.post(
        "/api/v1/memory/records",
        json={"scope": SCOPE, "content": "x", "idempotency_key": key()},
        headers=reader,
    )
    assert denied.status_code == 403 and denied.json()["capability"] == "memory_write"
    assert (await changes(stack, {"Authorization": "Bearer nope"})).status_code == 401
