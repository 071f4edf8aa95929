"""Races on agent task writes, merges and Proposals (issue 4, "Bad input and races"): real concurrent
requests against one keeper over PostgreSQL; each answers a defined 4xx or converges to one result,
never a 500 and never a duplicate branch, Proposal or commit."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import text

from tests.integration.conftest import Stack
from tests.integration.test_agent_tasks import FLAG, UPDATE, agent, flag, outbox
from tests.integration.test_proposals import API, approve, branch, head, propose, reviewer, supplier, update


async def post_all(stack: Stack, calls: list[tuple[str, dict[str, Any] | None, dict[str, str]]]) -> list[Any]:
    """Send the requests at once (the keeper handles them concurrently)."""
    responses: list[httpx.Response] = await asyncio.gather(
        *(stack.http.post(url, json=body, headers=headers) for url, body, headers in calls)
    )
    for response in responses:
        assert response.status_code < 500, response.text
    return responses


async def rows(stack: Stack, sql: str, **params: Any) -> list[Any]:
    async with stack.rt.db.engine.connect() as conn:
        return list((await conn.execute(text(sql), params)).all())


async def test_one_agent_racing_executions_on_one_task_shares_branch_and_proposal(supply: Stack) -> None:
    headers = await agent(supply)
    revisions = await supply.count("revisions")
    responses = await post_all(
        supply, [(FLAG, flag(severity), headers) for severity in ("low", "medium", "high")]
    )
    assert [r.status_code for r in responses] == [202, 202, 202], [r.text for r in responses]
    docs = [r.json() for r in responses]
    assert {d["branch"] for d in docs} == {"agent/svc_01j9x4k2/q4-audit"}
    assert len({d["proposal"]["id"] for d in docs}) == 1
    assert sorted(d["proposal"]["created"] for d in docs) == [False, False, True]
    assert sorted(d["branch_created"] for d in docs) == [False, False, True]
    assert not any(d["replayed"] for d in docs)
    assert await supply.count("revisions") == revisions + 3
    assert await supply.count("proposals") == 1
    assert len(await rows(supply, "select name from branches where name like 'agent/%'")) == 1
    proposal = (await supply.http.get(docs[0]["proposal"]["url"], headers=supply.admin)).json()
    assert sorted(e["invocation_id"] for e in proposal["executions"]) == sorted(
        d["invocation_id"] for d in docs
    )
    assert proposal["description"].count("- flag_supplier_risk(") == 3


async def test_two_agents_racing_on_one_task_name_get_a_branch_each(supply: Stack) -> None:
    first, second = await agent(supply, "svc_a"), await agent(supply, "svc_b")
    responses = await post_all(supply, [(FLAG, flag(), first), (FLAG, flag("low"), second)])
    assert [r.status_code for r in responses] == [202, 202], [r.text for r in responses]
    docs = [r.json() for r in responses]
    assert [d["branch"] for d in docs] == ["agent/svc_a/q4-audit", "agent/svc_b/q4-audit"]
    assert docs[0]["proposal"]["id"] != docs[1]["proposal"]["id"]
    assert await supply.count("proposals") == 2


async def test_a_retry_racing_its_first_attempt_converges(supply: Stack) -> None:
    headers = await agent(supply)
    revisions = await supply.count("revisions")
    responses = await post_all(supply, [(FLAG, flag(), headers)] * 3)
    assert [r.status_code for r in responses] == [202, 202, 202], [r.text for r in responses]
    docs = [r.json() for r in responses]
    assert len({d["proposal"]["id"] for d in docs}) == 1
    assert len({d["revision"] for d in docs}) == 1
    assert len({d["invocation_id"] for d in docs}) == 1
    assert sorted(d["replayed"] for d in docs) == [False, True, True]
    assert sorted(r.headers.get("Idempotent-Replayed", "") for r in responses) == ["", "true", "true"]
    assert await supply.count("revisions") == revisions + 1
    assert await supply.count("proposals") == 1
    proposal = (await supply.http.get(docs[0]["proposal"]["url"], headers=supply.admin)).json()
    assert len(proposal["executions"]) == 1
    # Merged, the operation event is written once.
    await approve(supply, proposal["id"], await reviewer(supply))
    merged = await supply.http.post(docs[0]["proposal"]["url"] + "/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert len(await outbox(supply, "operation.risk_flag_raised")) == 1


async def test_a_merge_racing_a_commit_on_the_target_keeps_both(supply: Stack) -> None:
    reviewing = await reviewer(supply)
    for round_, mode in enumerate(("copy", "overlay", "copy")):
        name = f"work{round_}"
        await branch(supply, name, mode=mode)
        await update(supply, "S-1001", name, risk_score=10 + round_)
        proposal = await propose(supply, name)
        await approve(supply, proposal["id"], reviewing)
        merge_response, commit_response = await post_all(
            supply,
            [
                (f"{API}/proposals/{proposal['id']}/merge", None, supply.admin),
                (
                    UPDATE,
                    {"parameters": {"key": "S-1002", "risk_score": 20 + round_}, "branch": "main"},
                    supply.admin,
                ),
            ],
        )
        assert merge_response.status_code == 200, merge_response.text
        assert commit_response.status_code == 200, commit_response.text
        assert merge_response.json()["status"] == "merged"
        assert (await supplier(supply, "S-1001"))["risk_score"] == str(10 + round_)
        assert (await supplier(supply, "S-1002"))["risk_score"] == str(20 + round_)
        # The head is the later of the two: the commit on the merge, or the merge on the commit.
        main = (await head(supply))["head"]
        assert main in (merge_response.json()["merged_revision"], commit_response.json()["revision"])


async def test_a_merge_racing_a_commit_of_the_same_attribute_loses_nothing(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    proposal = await propose(supply, "work")
    await approve(supply, proposal["id"], await reviewer(supply))
    merge_response, commit_response = await post_all(
        supply,
        [
            (f"{API}/proposals/{proposal['id']}/merge", None, supply.admin),
            (UPDATE, {"parameters": {"key": "S-1001", "risk_score": 55}}, supply.admin),
        ],
    )
    assert merge_response.status_code == 200 and commit_response.status_code == 200
    merged = merge_response.json()
    # Either the merge came first (and the commit then changed the merged value) or it found the
    # commit and reports the Conflict; the commit's value is on main either way.
    assert (await supplier(supply, "S-1001"))["risk_score"] == "55"
    if merged["status"] == "merged":
        history = await supply.http.get(
            f"{API}/kinds/Supplier/records/S-1001/history", params={"values": "true"}, headers=supply.admin
        )
        values = [c.get("after", {}).get("risk_score") for c in history.json()["changes"]][:2]
        assert values == ["55", "11"], history.json()["changes"][:2]
    else:
        assert merged["status"] == "open" and merged["merge"]["blockers"] == ["open-conflicts"]


async def test_two_merges_of_one_proposal_merge_once(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    await update(supply, "S-1002", "main", risk_score=22)  # a three-way merge: a new Revision
    proposal = await propose(supply, "work")
    await approve(supply, proposal["id"], await reviewer(supply))
    revisions = await supply.count("revisions")
    url = f"{API}/proposals/{proposal['id']}/merge"
    responses = await post_all(supply, [(url, None, supply.admin)] * 2)
    assert sorted(r.status_code for r in responses) == [200, 409], [r.text for r in responses]
    refused = next(r for r in responses if r.status_code == 409)
    assert refused.json()["type"].endswith("proposal-not-open")
    assert await supply.count("revisions") == revisions + 1
    attempts = await rows(supply, "select result, revision from merge_attempts order by id")
    # The attempt made on open (nothing kept), then the one merge.
    assert [a.result for a in attempts] == ["merge", "merge"]
    assert attempts[0].revision is None and attempts[1].revision is not None


async def test_a_merge_racing_a_close(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    proposal = await propose(supply, "work")
    await approve(supply, proposal["id"], await reviewer(supply))
    base = f"{API}/proposals/{proposal['id']}"
    merge_response, close_response = await post_all(
        supply, [(base + "/merge", None, supply.admin), (base + "/close", None, supply.admin)]
    )
    assert sorted([merge_response.status_code, close_response.status_code]) == [200, 409]
    final = (await supply.http.get(base, headers=supply.admin)).json()
    assert final["status"] == ("merged" if merge_response.status_code == 200 else "closed")


async def test_a_review_racing_a_close_and_a_review_of_a_closed_proposal(supply: Stack) -> None:
    reviewing = await reviewer(supply)
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    proposal = await propose(supply, "work")
    base = f"{API}/proposals/{proposal['id']}"
    review_response, close_response = await post_all(
        supply,
        [(base + "/reviews", {"decision": "approve"}, reviewing), (base + "/close", None, supply.admin)],
    )
    assert close_response.status_code == 200, close_response.text
    assert review_response.status_code in (200, 409), review_response.text
    if review_response.status_code == 409:
        assert review_response.json()["type"].endswith("proposal-not-open")
    late = await supply.http.post(base + "/reviews", json={"decision": "request_changes"}, headers=reviewing)
    assert late.status_code == 409 and late.json()["type"].endswith("proposal-not-open"), late.text
    assert late.json()["proposal_status"] == "closed"


async def test_racing_resolutions_of_one_conflict(supply: Stack) -> None:
    await branch(supply, "work")
    await update(supply, "S-1001", "work", risk_score=11)
    await update(supply, "S-1001", "main", risk_score=55)
    proposal = await propose(supply, "work")
    await approve(supply, proposal["id"], await reviewer(supply))
    base = f"{API}/proposals/{proposal['id']}"
    attempt = await supply.http.post(base + "/merge", headers=supply.admin)
    assert attempt.json()["attempt"]["result"] == "conflicts"
    [conflict] = (await supply.http.get(base + "/conflicts", headers=supply.admin)).json()["conflicts"]
    url = f"{base}/conflicts/{conflict['id']}/resolve"
    responses = await post_all(
        supply, [(url, {"resolution": "ours"}, supply.admin), (url, {"resolution": "theirs"}, supply.admin)]
    )
    assert sorted(r.status_code for r in responses) == [200, 409], [r.text for r in responses]
    winner = next(r for r in responses if r.status_code == 200).json()["resolution"]["choice"]
    refused = next(r for r in responses if r.status_code == 409)
    assert refused.json()["type"].endswith("conflict-resolved")
    assert refused.json()["resolution"]["choice"] == winner
    merged = await supply.http.post(base + "/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    assert (await supplier(supply, "S-1001"))["risk_score"] == ("55" if winner == "ours" else "11")


async def test_racing_creates_of_one_branch_and_one_proposal(supply: Stack) -> None:
    responses = await post_all(
        supply, [(API + "/branches", {"name": "work", "from": "main"}, supply.admin)] * 2
    )
    assert sorted(r.status_code for r in responses) == [201, 409], [r.text for r in responses]
    await update(supply, "S-1001", "work", risk_score=11)
    body = {"source": "work", "target": "main", "title": "Audit"}
    responses = await post_all(supply, [(API + "/proposals", body, supply.admin)] * 2)
    assert sorted(r.status_code for r in responses) == [201, 409], [r.text for r in responses]
    created = next(r for r in responses if r.status_code == 201).json()
    refused = next(r for r in responses if r.status_code == 409).json()
    assert refused["type"].endswith("already-exists") and refused["proposal"] == created["id"]
