"""The agent trace: calls made with Lorebase-Session become steps; notes; read back in order."""

from __future__ import annotations

from sqlalchemy import TextClause, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import ClauseElement

from lorebase_store.trace import sessions_naming_proposal
from tests.integration.conftest import Stack


def explain(statement: ClauseElement) -> TextClause:
    """EXPLAIN of `statement`, its parameters written in."""
    sql = statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    return text(f"EXPLAIN {sql}")


async def test_a_session_records_steps_and_notes(supply: Stack) -> None:
    agent = await supply.principal("agt_tracer", type="service")
    await supply.grant("supply", "agt_tracer", "viewer")
    headers = {**agent, "Lorebase-Session": "sess-42"}
    context = await supply.http.post(
        "/api/v1/domains/supply/context", json={"refs": ["Supplier/S-1001"]}, headers=headers
    )
    assert context.status_code == 200
    query = await supply.http.post(
        "/api/v1/domains/supply/query", json={"kind": "Supplier", "limit": 3}, headers=headers
    )
    assert query.status_code == 200
    missing = await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-0000", headers=headers)
    assert missing.status_code == 404
    note = await supply.http.post(
        "/api/v1/sessions/sess-42/notes", json={"text": "S-1001 looks risky"}, headers=agent
    )
    assert note.status_code == 201
    untraced = await supply.http.get("/api/v1/domains/supply/kinds/Supplier/records/S-1002", headers=agent)
    assert untraced.status_code == 200
    session = (await supply.http.get("/api/v1/sessions/sess-42", headers=agent)).json()
    assert session["steps"] == 3
    kinds = [(e["kind"], e.get("call"), e.get("status")) for e in session["entries"]]
    assert kinds == [
        ("step", "Context", 200),
        ("step", "Query", 200),
        ("step", "GetRecord", 404),
        ("note", None, None),
    ]
    context_step = session["entries"][0]
    assert context_step["domain"] == "supply" and context_step["latency_ms"] >= 0
    assert "Supplier/S-1001" in context_step["touched"] and "Part/P-10028" in context_step["touched"]
    assert context_step["request"]["body"] == {"refs": ["Supplier/S-1001"]}
    assert session["entries"][1]["counts"]["records"] == 3
    assert session["entries"][3]["text"] == "S-1001 looks risky"
    # another principal cannot read it; the admin can
    other = await supply.principal("agt_other", type="service")
    assert (await supply.http.get("/api/v1/sessions/sess-42", headers=other)).status_code == 404
    assert (await supply.http.get("/api/v1/sessions/sess-42", headers=supply.admin)).json()["steps"] == 3
    assert (await supply.http.get("/api/v1/sessions/bad%20id", headers=agent)).status_code == 400
    assert (
        await supply.http.post("/api/v1/sessions/sess-42/notes", json={"text": ""}, headers=agent)
    ).status_code == 422


async def test_only_the_sessions_principal_and_the_admin_add_to_it(supply: Stack) -> None:
    """Issue 12, item 7: any principal could add notes to another principal's session."""
    owner = await supply.principal("agt_owner", type="service")
    intruder = await supply.principal("agt_intruder", type="service")
    for principal in ("agt_owner", "agt_intruder"):
        await supply.grant("supply", principal, "viewer")
    notes = "/api/v1/sessions/sess-owned/notes"
    first = await supply.http.post(
        "/api/v1/domains/supply/query",
        json={"kind": "Supplier", "limit": 1},
        headers={**owner, "Lorebase-Session": "sess-owned"},
    )
    assert first.status_code == 200
    refused = await supply.http.post(notes, json={"text": "injected"}, headers=intruder)
    assert refused.status_code == 403, refused.text
    assert (
        refused.json()["type"].endswith("forbidden") and "session id of your own" in refused.json()["detail"]
    )
    # A call of the intruder naming the session is answered, but not kept as a step of it.
    call = await supply.http.post(
        "/api/v1/domains/supply/query",
        json={"kind": "Supplier", "limit": 1},
        headers={**intruder, "Lorebase-Session": "sess-owned"},
    )
    assert call.status_code == 200
    assert (
        await supply.http.post(notes, json={"text": "from the admin"}, headers=supply.admin)
    ).status_code == 201
    assert (await supply.http.post(notes, json={"text": "mine"}, headers=owner)).status_code == 201
    session = (await supply.http.get("/api/v1/sessions/sess-owned", headers=supply.admin)).json()
    assert [(e["principal"], e["kind"]) for e in session["entries"]] == [
        ("agt_owner", "step"),
        ("usr_admin", "note"),
        ("agt_owner", "note"),
    ]
    # A session id nobody uses is free to take; a session of the admin is the admin's.
    assert (
        await supply.http.post("/api/v1/sessions/sess-new/notes", json={"text": "a"}, headers=intruder)
    ).status_code == 201
    assert (
        await supply.http.post("/api/v1/sessions/sess-new/notes", json={"text": "b"}, headers=owner)
    ).status_code == 403
    await supply.http.post("/api/v1/sessions/sess-admin/notes", json={"text": "a"}, headers=supply.admin)
    assert (
        await supply.http.post("/api/v1/sessions/sess-admin/notes", json={"text": "b"}, headers=owner)
    ).status_code == 403


async def test_a_task_write_step_names_what_it_changed_and_its_branch_is_read_after_merge(
    supply: Stack,
) -> None:
    """A write's step lists the Records its Revision changed, the task branch and the Proposal; once
    the Proposal merged and its task branch is gone, the branch is still read at its Revision (its
    archive), its head is not; an answer's origin (`examples/supply`) is no touched Record."""
    agent = await supply.principal("agt_writer", type="service")
    await supply.grant("supply", "agt_writer", "editor")
    headers = {**agent, "Lorebase-Session": "sess-write"}
    base = "/api/v1/domains/supply"
    wrote = await supply.http.post(
        f"{base}/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1002", "risk_score": 61}, "task": "trace-write"},
        headers=headers,
    )
    assert wrote.status_code == 202, wrote.text
    branch, revision, proposal = (
        wrote.json()["branch"],
        wrote.json()["revision"],
        wrote.json()["proposal"]["id"],
    )
    lineage = await supply.http.get(f"{base}/kinds/Supplier/records/S-1002/lineage", headers=headers)
    assert lineage.status_code == 200 and "examples/supply" in lineage.text
    merged = await supply.http.post(f"{base}/proposals/{proposal}/merge", headers=supply.admin)
    assert merged.status_code in (200, 409), merged.text
    if merged.status_code == 409:  # approvals: an admin's review, then the merge
        reviewer = await supply.principal("usr_trace_reviewer")
        await supply.grant("supply", "usr_trace_reviewer", "admin")
        review = await supply.http.post(
            f"{base}/proposals/{proposal}/reviews", json={"decision": "approve"}, headers=reviewer
        )
        assert review.status_code == 200, review.text
        merged = await supply.http.post(f"{base}/proposals/{proposal}/merge", headers=reviewer)
    assert merged.json()["status"] == "merged", merged.text
    assert (await supply.http.get(f"{base}/branches/{branch}", headers=supply.admin)).status_code == 404

    for reader in (agent, supply.admin):
        session = (await supply.http.get("/api/v1/sessions/sess-write", headers=reader)).json()
        write, read = (e for e in session["entries"] if e["kind"] == "step")
        assert write["call"] == "ExecuteOperation" and write["branch"] == branch
        assert write["revisions"] == [revision] and write["proposal"] == proposal
        assert write["changed"] == [{"ref": "Supplier/S-1002", "change": "modified"}]
        assert write["touched"] == ["Supplier/S-1002"] and write["counts"]["changed"] == 1
        assert read["touched"] == ["Supplier/S-1002"], read["touched"]  # no examples/supply

    at = await supply.http.get(
        f"{base}/kinds/Supplier/records/S-1002", params={"branch": branch, "at": revision}, headers=agent
    )
    assert at.status_code == 200, at.text
    assert at.json()["values"]["risk_score"] == "61" and at.json()["revision"] == revision
    head = await supply.http.get(
        f"{base}/kinds/Supplier/records/S-1002", params={"branch": branch}, headers=agent
    )
    assert head.status_code == 404 and "unknown branch" in head.json()["detail"]
    other = await supply.http.get(
        f"{base}/kinds/Supplier/records/S-1002",
        params={"branch": "agent/nobody/x", "at": revision},
        headers=agent,
    )
    assert other.status_code == 404, "a Revision is read only on the (deleted) branch that made it"


async def test_a_refused_step_keeps_its_problem_and_sessions_are_found_by_proposal(supply: Stack) -> None:
    agent = await supply.principal("agt_proposer", type="service")
    await supply.grant("supply", "agt_proposer", "editor")
    headers = {**agent, "Lorebase-Session": "sess-proposer"}
    base = "/api/v1/domains/supply"
    missing = await supply.http.get(f"{base}/kinds/Supplier/records/S-0000", headers=headers)
    assert missing.status_code == 404
    wrote = await supply.http.post(
        f"{base}/operations/update_supplier/execute",
        json={"parameters": {"key": "S-1003", "risk_score": 62}, "task": "trace-find"},
        headers=headers,
    )
    assert wrote.status_code == 202, wrote.text
    proposal = wrote.json()["proposal"]["id"]
    session = (await supply.http.get("/api/v1/sessions/sess-proposer", headers=agent)).json()
    refused, write = session["entries"]
    assert refused["problem"] == {
        "code": "not-found",
        "title": missing.json()["title"],
        "detail": missing.json()["detail"],
    }
    assert write["bytes"] == len(wrote.content) and "problem" not in write
    for reader in (agent, supply.admin):
        found = await supply.http.get("/api/v1/sessions", params={"proposal": proposal}, headers=reader)
        assert [s["session"] for s in found.json()["sessions"]] == ["sess-proposer"], found.text
    other = await supply.http.get("/api/v1/sessions", params={"proposal": "prp_none"}, headers=supply.admin)
    assert other.json()["sessions"] == []
    stranger = await supply.principal("agt_stranger", type="service")
    hidden = await supply.http.get("/api/v1/sessions", params={"proposal": proposal}, headers=stranger)
    assert hidden.json()["sessions"] == [], "another principal's session is not listed"
    # The filter finds the steps naming the Proposal by an index (migration 0020), not by reading
    # every step of every trace: the plan of the store's own query, with sequential scans priced out.
    proposed = sessions_naming_proposal(proposal)
    async with supply.rt.db.engine.begin() as conn:
        await conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(row[0] for row in await conn.execute(explain(proposed)))
    assert "trace_entries_proposal" in plan, plan
