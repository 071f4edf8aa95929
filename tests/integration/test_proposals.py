"""Branches (copy and overlay), merges (fast-forward, three-way, Conflicts) and Proposals, through REST."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack

API = "/api/v1/domains/supply"
EXECUTE = API + "/operations/{}/execute"


async def branch(stack: Stack, name: str, *, mode: str = "copy", base: str = "main") -> dict[str, Any]:
    response = await stack.http.post(
        API + "/branches", json={"name": name, "from": base, "mode": mode}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def update(stack: Stack, key: str, branch_name: str, **values: Any) -> dict[str, Any]:
    response = await stack.http.post(
        EXECUTE.format("update_supplier"),
        json={"parameters": {"key": key, **values}, "branch": branch_name},
        headers=stack.admin,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def supplier(stack: Stack, key: str, branch_name: str = "main") -> dict[str, Any]:
    response = await stack.http.get(
        f"{API}/kinds/Supplier/records/{key}", params={"branch": branch_name}, headers=stack.admin
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["values"])


async def head(stack: Stack, name: str = "main") -> dict[str, Any]:
    response = await stack.http.get(f"{API}/branches/{name}", headers=stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def propose(stack: Stack, source: str, *, title: str = "Audit") -> dict[str, Any]:
    response = await stack.http.post(
        API + "/proposals", json={"source": source, "target": "main", "title": title}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def reviewer(stack: Stack) -> dict[str, str]:
    headers = await stack.principal("usr_reviewer")
    await stack.grant("supply", "usr_reviewer", "reviewer")
    return headers


async def approve(stack: Stack, proposal: str, headers: dict[str, str]) -> None:
    response = await stack.http.post(
        f"{API}/proposals/{proposal}/reviews", json={"decision": "approve"}, headers=headers
    )
    assert response.status_code == 200, response.text


async def merge(stack: Stack, proposal: str) -> dict[str, Any]:
    response = await stack.http.post(f"{API}/proposals/{proposal}/merge", headers=stack.admin)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_overlay_branch_reads_the_base_at_the_fork_point(supply: Stack) -> None:
    before = await supplier(supply, "S-1002")
    await branch(supply, "audit", mode="overlay")
    rows_before = await supply.count("records")
    await update(supply, "S-1001", "audit", risk_score=10)
    assert await supply.count("records") == rows_before  # an overlay stores no materialised rows
    await update(supply, "S-1002", "main", risk_score=77)  # the base moves on
    assert (await supplier(supply, "S-1001", "audit"))["risk_score"] == "10"
    assert (await supplier(supply, "S-1001"))["risk_score"] == "90"
    assert (await supplier(supply, "S-1002", "audit")) == before
    assert (await supplier(supply, "S-1002"))["risk_score"] == "77"
    query = await supply.http.post(
        API + "/query",
        json={
            "kind": "Supplier",
            "where": {"attr": "risk_score", "op": "eq", "value": 10},
            "branch": "audit",
        },
        headers=supply.admin,
    )
    assert query.status_code == 200, query.text
    assert [r["key"] for r in query.json()["records"]] == ["S-1001"]


async def test_fast_forward_merge_moves_main_onto_the_branch(supply: Stack) -> None:
    await branch(supply, "audit", mode="overlay")
    committed = await update(supply, "S-1001", "audit", risk_score=12)
    proposal = await propose(supply, "audit")
    assert proposal["status"] == "open"
    assert proposal["approval"] == {"required": 1, "approvals": 0, "satisfied": False}
    assert proposal["merge"]["blockers"] == ["approvals-pending"]
    assert proposal["kinds"] == ["Supplier"]
    blocked = await supply.http.post(f"{API}/proposals/{proposal['id']}/merge", headers=supply.admin)
    assert blocked.status_code == 409 and blocked.json()["type"].endswith("merge-blocked"), blocked.text
    own = await supply.http.post(
        f"{API}/proposals/{proposal['id']}/reviews", json={"decision": "approve"}, headers=supply.admin
    )
    assert own.status_code == 403, own.text
    await approve(supply, proposal["id"], await reviewer(supply))
    merged = await merge(supply, proposal["id"])
    assert merged["status"] == "merged"
    assert merged["attempt"]["result"] == "fast_forward"
    assert merged["merged_revision"] == committed["revision"]
    assert (await head(supply))["head"] == committed["revision"]
    assert (await supplier(supply, "S-1001"))["risk_score"] == "12"
    history = await supply.http.get(f"{API}/kinds/Supplier/records/S-1001/history", headers=supply.admin)
    assert history.json()["changes"][0]["revision"] == committed["revision"]
    lineage = await supply.http.get(f"{API}/kinds/Supplier/records/S-1001/lineage", headers=supply.admin)
    assert lineage.status_code == 200, lineage.text
    risk = lineage.json()["attributes"]["risk_score"]
    assert risk["revision"] == committed["revision"]
    assert risk["brought_by"] == committed["revision"]
    assert risk["proposal"] == {"id": proposal["id"], "title": "Audit"}
    explain = (
        await supply.http.get(f"{API}/kinds/Supplier/records/S-1001/explain", headers=supply.admin)
    ).json()
    assert [p["id"] for p in explain["proposals"]] == [proposal["id"]]
    again = await supply.http.post(f"{API}/proposals/{proposal['id']}/merge", headers=supply.admin)
    assert again.status_code == 409 and again.json()["type"].endswith("proposal-not-open")


async def test_three_way_merge_keeps_both_sides(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    await update(supply, "S-1002", "main", risk_score=22)
    main_head = (await head(supply))["head"]
    work_head = (await head(supply, "work"))["head"]
    proposal = await propose(supply, "work")
    await approve(supply, proposal["id"], await reviewer(supply))
    merged = await merge(supply, proposal["id"])
    assert merged["attempt"]["result"] == "merge", merged
    revision = merged["merged_revision"]
    assert (await head(supply))["head"] == revision
    assert (await supplier(supply, "S-1001"))["risk_score"] == "11"
    assert (await supplier(supply, "S-1002"))["risk_score"] == "22"
    diff = await supply.http.get(
        API + "/diff", params={"from": main_head, "to": revision}, headers=supply.admin
    )
    assert diff.status_code == 200, diff.text
    lineage = (
        await supply.http.get(f"{API}/kinds/Supplier/records/S-1001/lineage", headers=supply.admin)
    ).json()
    assert lineage["revision"] == revision
    risk = lineage["attributes"]["risk_score"]
    assert risk["revision"] == work_head and risk["brought_by"] == revision
    assert risk["proposal"]["id"] == proposal["id"]
    row = await supply.rt.db.read("rev", lambda txn: txn.get_revision(1, revision))
    assert row is not None and row.parents == [main_head, work_head]
    # The value keeps the Revision of the work branch that set it, and names the merge that brought it.
    record = await supply.rt.db.read("rec", lambda txn: txn.get_records(1, "main", "Supplier", ["S-1001"]))
    provenance = record["S-1001"].provenance
    assert provenance["risk_score"] == work_head
    assert provenance["$via"]["risk_score"]["revision"] == revision
    assert provenance["$via"]["risk_score"]["proposal"] == proposal["id"]


async def test_conflicts_are_stored_resolved_and_merged(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    await update(supply, "S-1001", "main", risk_score=55)
    proposal = await propose(supply, "work")
    # Tried on open (issue 15 §5): the Conflict is known before anyone asks to merge.
    assert proposal["attempt"]["result"] == "conflicts" and proposal["attempt"]["revision"] is None
    assert proposal["merge"]["mergeable"] is False and "open-conflicts" in proposal["merge"]["blockers"]
    assert proposal["conflicts"] == {"open": 1, "resolved": 0}
    await approve(supply, proposal["id"], await reviewer(supply))
    attempt = await merge(supply, proposal["id"])
    assert attempt["status"] == "open"
    assert attempt["attempt"]["result"] == "conflicts"
    assert attempt["attempt"]["counts"] == {"both_changed": 1}
    assert attempt["merge"]["blockers"] == ["open-conflicts"]
    assert (await supplier(supply, "S-1001"))["risk_score"] == "55"
    listed = (
        await supply.http.get(f"{API}/proposals/{proposal['id']}/conflicts", headers=supply.admin)
    ).json()
    [conflict] = listed["conflicts"]
    assert (conflict["code"], conflict["attribute"], conflict["ours"], conflict["theirs"]) == (
        "both_changed",
        "risk_score",
        "55",
        "11",
    )
    url = f"{API}/proposals/{proposal['id']}/conflicts/{conflict['id']}/resolve"
    bad = await supply.http.post(url, json={"resolution": "value", "value": 500}, headers=supply.admin)
    assert bad.status_code == 422, bad.text
    # A value goes with resolution value only: even a null one (absent and null differ).
    for body in ({"resolution": "ours", "value": None}, {"resolution": "theirs", "value": 11}):
        refused = await supply.http.post(url, json=body, headers=supply.admin)
        assert refused.status_code == 422 and "value goes with" in refused.json()["detail"], refused.text
    resolved = await supply.http.post(url, json={"resolution": "value", "value": 33}, headers=supply.admin)
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["status"] == "resolved"
    twice = await supply.http.post(url, json={"resolution": "ours"}, headers=supply.admin)
    assert twice.status_code == 409 and twice.json()["type"].endswith("conflict-resolved")
    merged = await merge(supply, proposal["id"])
    assert merged["status"] == "merged" and merged["attempt"]["result"] == "merge"
    assert merged["attempt"]["resolved_conflicts"] == 1
    assert (await supplier(supply, "S-1001"))["risk_score"] == "33"
    lineage = (
        await supply.http.get(f"{API}/kinds/Supplier/records/S-1001/lineage", headers=supply.admin)
    ).json()
    risk = lineage["attributes"]["risk_score"]
    assert risk["merge_resolution"] == {"choice": "value", "value": "33"}
    assert risk["brought_by"] == merged["merged_revision"]


async def test_branch_delete_keeps_history_and_frees_the_name(supply: Stack) -> None:
    await branch(supply, "scratch", mode="overlay")
    first = await update(supply, "S-1001", "scratch", risk_score=1)
    response = await supply.http.delete(f"{API}/branches/scratch", headers=supply.admin)
    assert response.status_code == 200, response.text
    assert (await supply.http.get(f"{API}/branches/scratch", headers=supply.admin)).status_code == 404
    gone = await supply.rt.db.read("rev", lambda txn: txn.get_revision(1, first["revision"]))
    assert gone is not None and gone.branch.startswith("scratch~")
    await branch(supply, "scratch", mode="overlay")
    assert (await supplier(supply, "S-1001", "scratch"))["risk_score"] == "90"
    history = await supply.http.get(
        f"{API}/kinds/Supplier/records/S-1001/history", params={"branch": "scratch"}, headers=supply.admin
    )
    assert first["revision"] not in [c["revision"] for c in history.json()["changes"]]
    default = await supply.http.delete(f"{API}/branches/main", headers=supply.admin)
    assert default.status_code == 409


async def test_proposal_bad_input(supply: Stack) -> None:
    await branch(supply, "work")
    for body, status in (
        ({}, 422),
        ({"source": "work"}, 422),
        ({"source": "main", "title": "x"}, 422),
        ({"source": "nope", "title": "x"}, 404),
        ({"source": "work", "title": "x", "extra": 1}, 422),
        ({"source": "work", "title": 5}, 422),
    ):
        response = await supply.http.post(API + "/proposals", json=body, headers=supply.admin)
        assert response.status_code == status, (body, response.text)
    proposal = await propose(supply, "work")
    dup = await supply.http.post(
        API + "/proposals", json={"source": "work", "title": "again"}, headers=supply.admin
    )
    assert dup.status_code == 409 and dup.json()["proposal"] == proposal["id"]
    bad_review = await supply.http.post(
        f"{API}/proposals/{proposal['id']}/reviews", json={"decision": "maybe"}, headers=supply.admin
    )
    assert bad_review.status_code == 422
    closed = await supply.http.post(f"{API}/proposals/{proposal['id']}/close", headers=supply.admin)
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    late = await supply.http.post(
        f"{API}/proposals/{proposal['id']}/reviews",
        json={"decision": "approve"},
        headers=await reviewer(supply),
    )
    assert late.status_code == 409
    assert (await supply.http.get(f"{API}/proposals/prp_nope", headers=supply.admin)).status_code == 404
    listed = await supply.http.get(API + "/proposals", params={"status": "closed"}, headers=supply.admin)
    assert [p["id"] for p in listed.json()["proposals"]] == [proposal["id"]]
    assert (
        await supply.http.get(API + "/proposals", params={"status": "x"}, headers=supply.admin)
    ).status_code == 400


async def test_an_author_cannot_approve_their_own_proposal(supply: Stack) -> None:
    author = await reviewer(supply)  # a reviewer holds proposal.create and proposal.review
    response = await supply.http.post(
        API + "/branches", json={"name": "own-work", "from": "main"}, headers=author
    )
    assert response.status_code == 201, response.text
    opened = await supply.http.post(
        API + "/proposals", json={"source": "own-work", "title": "Mine"}, headers=author
    )
    assert opened.status_code == 201, opened.text
    url = f"{API}/proposals/{opened.json()['id']}/reviews"
    own = await supply.http.post(url, json={"decision": "approve"}, headers=author)
    assert own.status_code == 403 and own.json()["code"] == "own-proposal", own.text
    other = await supply.http.post(url, json={"decision": "approve"}, headers=supply.admin)
    assert other.status_code == 200, other.text


async def test_a_proposal_is_tried_on_open_and_again_when_a_head_moves(supply: Stack) -> None:
    """Issue 15 §5: `mergeable`, Conflicts and blockers are known before a merge is asked: the
    Proposal is tried when it opens, and again (in keeper's background, writes/moves.py) each time
    its source or its target head moves."""
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    proposal = await propose(supply, "work")
    url = f"{API}/proposals/{proposal['id']}"
    work, main = (await head(supply, "work"))["head"], (await head(supply))["head"]
    first = proposal["attempt"]
    assert first["result"] == "fast_forward" and (first["source_head"], first["target_head"]) == (work, main)
    assert proposal["conflicts"]["open"] == 0 and "open-conflicts" not in proposal["merge"]["blockers"]
    # The target moves and now conflicts: found without a merge request.
    await update(supply, "S-1001", "main", risk_score=55)
    await supply.rt.moves.settled()
    moved = (await supply.http.get(url, headers=supply.admin)).json()
    assert moved["attempt"]["result"] == "conflicts"
    assert moved["attempt"]["target_head"] == (await head(supply))["head"]
    assert moved["merge"]["mergeable"] is False and "open-conflicts" in moved["merge"]["blockers"]
    # The source moves back to agree with the target: the Conflict is gone again.
    await update(supply, "S-1001", "work", risk_score=55)
    await supply.rt.moves.settled()
    agreed = (await supply.http.get(url, headers=supply.admin)).json()
    assert agreed["attempt"]["source_head"] == (await head(supply, "work"))["head"]
    assert agreed["attempt"]["result"] == "merge" and agreed["conflicts"]["open"] == 0
    assert "open-conflicts" not in agreed["merge"]["blockers"]
    # A head that did not move is not tried again.
    attempts = await supply.count("merge_attempts")
    supply.rt.moves.moved(1, "work")
    await supply.rt.moves.settled()
    assert await supply.count("merge_attempts") == attempts


async def test_a_keeper_that_starts_rechecks_the_open_proposals(supply: Stack) -> None:
    """A keeper that stopped between a commit and its check left an attempt out of date; the next
    keeper reports every open Proposal's source as moved when it starts (server.py → recheck_open)."""
    from lorebase_keeper.proposals import recheck_open

    await branch(supply, "late")
    await update(supply, "S-1001", "late", risk_score=12)
    proposal = await propose(supply, "late")
    url = f"{API}/proposals/{proposal['id']}"
    # The check of this commit is lost, as when keeper stops right after it.
    listeners, supply.rt.moves._listeners = supply.rt.moves._listeners, []
    try:
        await update(supply, "S-1001", "main", risk_score=56)
    finally:
        supply.rt.moves._listeners = listeners
    stale = (await supply.http.get(url, headers=supply.admin)).json()
    assert stale["attempt"]["result"] == "fast_forward"
    assert "open-conflicts" not in stale["merge"]["blockers"]
    assert await recheck_open(supply.rt) >= 1
    await supply.rt.moves.settled()
    current = (await supply.http.get(url, headers=supply.admin)).json()
    assert current["attempt"]["result"] == "conflicts"
    assert current["attempt"]["target_head"] == (await head(supply))["head"]
    assert current["merge"]["mergeable"] is False and "open-conflicts" in current["merge"]["blockers"]
