"""GET /sessions (own vs the admin's, filters, keyset pages, error counts) and the Links a step
touched, shown through the reader's current grants."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.integration.conftest import Stack, open_stack

QUERY = "/api/v1/domains/supply/query"


async def step(stack: Stack, headers: dict[str, str], session: str, *, fail: bool = False) -> None:
    body: dict[str, Any] = {"kind": "Nope" if fail else "Supplier", "limit": 1}
    response = await stack.http.post(QUERY, json=body, headers={**headers, "Lorebase-Session": session})
    assert response.status_code == (400 if fail else 200) or fail, response.text


async def listed(stack: Stack, headers: dict[str, str], **query: Any) -> dict[str, Any]:
    response = await stack.http.get("/api/v1/sessions", params=query, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_a_principal_lists_its_sessions_and_the_admin_all(supply: Stack) -> None:
    alice = await supply.principal("agt_alice", type="service")
    bob = await supply.principal("agt_bob", type="service")
    for principal in ("agt_alice", "agt_bob"):
        await supply.grant("supply", principal, "viewer")
    await step(supply, alice, "a-1")
    await step(supply, alice, "a-1", fail=True)
    await step(supply, alice, "a-1")
    note = await supply.http.post("/api/v1/sessions/a-1/notes", json={"text": "checked"}, headers=alice)
    assert note.status_code == 201
    await step(supply, bob, "b-1")
    await step(supply, alice, "a-2", fail=True)
    await step(supply, alice, "a-3")

    mine = await listed(supply, alice)
    assert [s["session"] for s in mine["sessions"]] == ["a-3", "a-2", "a-1"] and mine["next"] is None
    first = mine["sessions"][2]
    assert first["principal"] == "agt_alice" and first["domains"] == ["supply"]
    assert (first["steps"], first["errors"], first["notes"]) == (3, 1, 1)
    assert first["started_at"] <= first["last_at"]
    assert mine["sessions"][1]["errors"] == 1 and mine["sessions"][0]["errors"] == 0

    everyone = await listed(supply, supply.admin)
    assert [s["session"] for s in everyone["sessions"]] == ["a-3", "a-2", "b-1", "a-1"]
    assert [s["session"] for s in (await listed(supply, supply.admin, principal="agt_bob"))["sessions"]] == [
        "b-1"
    ]
    assert (await listed(supply, bob, principal="agt_alice"))["sessions"] == []  # not bob's to see
    assert (await listed(supply, alice, domain="other"))["sessions"] == []
    assert len((await listed(supply, alice, domain="supply"))["sessions"]) == 3

    # Keyset pages: the same sessions, in the same order, however they are cut.
    pages: list[str] = []
    cursor = None
    while True:
        page = await listed(supply, supply.admin, limit=1, **({"before": cursor} if cursor else {}))
        pages += [s["session"] for s in page["sessions"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert pages == ["a-3", "a-2", "b-1", "a-1"]
    for query, status in (({"before": "nonsense"}, 400), ({"limit": 201}, 400), ({"limit": -1}, 400)):
        response = await supply.http.get("/api/v1/sessions", params=query, headers=alice)
        assert response.status_code == status, (query, response.text)
    assert (await supply.http.get("/api/v1/sessions")).status_code == 401


async def test_steps_list_the_links_they_touched_that_the_reader_may_read(supply: Stack) -> None:
    reader = await supply.principal("agt_reader", type="service")
    grant = await supply.grant("supply", "agt_reader", "viewer")
    headers = {**reader, "Lorebase-Session": "links-1"}
    links = await supply.http.get(
        "/api/v1/domains/supply/kinds/Supplier/records/S-1001/links/supplies", headers=headers
    )
    assert links.status_code == 200, links.text
    context = await supply.http.post(
        "/api/v1/domains/supply/context", json={"refs": ["Supplier/S-1001"]}, headers=headers
    )
    assert context.status_code == 200
    session = (await supply.http.get("/api/v1/sessions/links-1", headers=reader)).json()
    by_links, by_context = session["entries"][0], session["entries"][1]
    expected = [
        {"relation": "supplied_by", "from": link["from"], "to": link["to"]} for link in links.json()["links"]
    ]
    assert expected and by_links["touched_links"] == sorted(expected, key=lambda x: (x["from"], x["to"]))
    assert by_links["counts"]["touched_links"] == len(expected)
    assert any(link["relation"] == "supplied_by" for link in by_context["touched_links"])
    assert all(set(link) == {"relation", "from", "to"} for link in by_context["touched_links"])
    # Narrowed to Suppliers since: the Parts and every Link with a Part end leave the trace.
    assert (
        await supply.http.delete(f"/api/v1/domains/supply/grants/{grant}", headers=supply.admin)
    ).status_code == 200
    await supply.grant("supply", "agt_reader", "viewer", kinds=["Supplier"])
    narrowed = (await supply.http.get("/api/v1/sessions/links-1", headers=reader)).json()
    for entry in narrowed["entries"]:
        assert entry["touched_links"] == [] and entry["counts"]["touched_links"] == 0
        assert entry["touched"] and all(ref.startswith("Supplier/") for ref in entry["touched"])
    # The admin reads everything the steps kept.
    full = (await supply.http.get("/api/v1/sessions/links-1", headers=supply.admin)).json()
    assert full["entries"][0]["touched_links"] == by_links["touched_links"]


async def test_migration_0012_summarises_the_sessions_kept_before_it(database_url: str) -> None:
    """Down to 0011 (no summaries) and up again: the list is the one the entries make."""
    from alembic import command

    from lorebase_store.migrate import _config

    async with open_stack(database_url) as stack:
        await stack.supply()
        alice = await stack.principal("agt_alice", type="service")
        await stack.grant("supply", "agt_alice", "viewer")
        await step(stack, alice, "m-1")
        await step(stack, alice, "m-1", fail=True)
        await stack.http.post("/api/v1/sessions/m-1/notes", json={"text": "admin"}, headers=stack.admin)
        await step(stack, stack.admin, "m-2")
        before = await listed(stack, stack.admin)
        mine = await listed(stack, alice)
    await asyncio.to_thread(command.downgrade, _config(database_url), "0011")
    await asyncio.to_thread(command.upgrade, _config(database_url), "head")
    async with open_stack(database_url) as stack:
        assert await listed(stack, stack.admin) == before
        assert [(s["session"], s["steps"], s["errors"], s["notes"]) for s in before["sessions"]] == [
            ("m-2", 1, 0, 0),
            ("m-1", 2, 1, 1),
        ]
        assert before["sessions"][1]["principal"] == "agt_alice"
        assert await listed(stack, alice) == mine and mine["sessions"][0]["notes"] == 0  # its own entries
