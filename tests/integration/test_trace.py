"""The agent trace: calls made with Lorebase-Session become steps; notes; read back in order."""

from __future__ import annotations

from tests.integration.conftest import Stack


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
