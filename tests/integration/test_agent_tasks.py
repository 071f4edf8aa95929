"""Agent task writes (seed section 4, "Writes that need review"): task branch, Proposal, merge, replays."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from lorebase.schema import parse_yaml
from tests.integration.conftest import SUPPLY, Stack

API = "/api/v1/domains/supply"
FLAG = API + "/operations/flag_supplier_risk/execute"
UPDATE = API + "/operations/update_supplier/execute"


async def agent(stack: Stack, name: str = "svc_01j9x4k2") -> dict[str, str]:
    headers = await stack.principal(name, type="service")
    await stack.grant("supply", name, "editor")
    return headers


def flag(severity: str = "high", **extra: Any) -> dict[str, Any]:
    return {
        "parameters": {"supplier": "S-1001", "severity": severity, "reason": "Two late deliveries"},
        "task": "Q4 Audit",
        "intent": "Flag S-1001 after the Q4 delivery audit",
        "idempotency_key": f"q4-audit-S-1001-{severity}",
        **extra,
    }


async def outbox(stack: Stack, type_: str) -> list[dict[str, Any]]:
    async with stack.rt.db.engine.connect() as conn:
        rows = await conn.execute(
            text("select branch, event from outbox where type = :t order by sequence"), {"t": type_}
        )
        return [{"branch": r.branch, **r.event} for r in rows]


async def test_task_write_opens_a_proposal_and_a_retry_finds_it(supply: Stack) -> None:
    headers = await agent(supply)
    plain = await supply.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 5}}, headers=headers
    )
    assert plain.status_code == 409 and plain.json()["reason"] == "protected-branch"
    assert plain.json()["next"][0]["action"] == "name_a_task"
    revisions = await supply.count("revisions")
    response = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "proposed"
    assert body["branch"] == "agent/svc_01j9x4k2/q4-audit"
    assert body["target"] == "main"
    assert body["proposal"]["title"] == "Agent svc_01j9x4k2: q4-audit"
    assert body["proposal"]["created"] is True and body["proposal"]["status"] == "open"
    assert body["approval"] == {"required": 1, "approvals": 0, "satisfied": False}
    assert body["attempt"]["result"] == "fast_forward"
    assert body["merge"] == {
        "requested": False,
        "allowed": False,
        "performed": False,
        "blockers": ["approvals-pending"],
    }
    assert body["branch_created"] is True and body["replayed"] is False
    assert [n["action"] for n in body["next"]] == ["await_review", "get_proposal"]
    assert await supply.count("revisions") == revisions + 1
    # The operation event waits for the merge.
    assert await outbox(supply, "operation.risk_flag_raised") == []
    proposal = (await supply.http.get(body["proposal"]["url"], headers=supply.admin)).json()
    assert proposal["description"].startswith(
        "Flag S-1001 after the Q4 delivery audit\n\nExecutions:\n- flag_supplier_risk("
    )
    assert body["invocation_id"] in proposal["description"]

    again = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert again.status_code == 202, again.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["proposal"]["id"] == body["proposal"]["id"]
    assert again.json()["revision"] == body["revision"]
    assert await supply.count("revisions") == revisions + 1
    assert await supply.count("proposals") == 1

    reviewer = await supply.principal("usr_reviewer")
    await supply.grant("supply", "usr_reviewer", "reviewer")
    review = await supply.http.post(
        body["proposal"]["url"] + "/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert review.status_code == 200, review.text
    merged = await supply.http.post(body["proposal"]["url"] + "/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    assert merged.json()["status"] == "merged" and merged.json()["branch_deleted"] is True
    branch = await supply.http.get(API + "/branches/agent/svc_01j9x4k2/q4-audit", headers=supply.admin)
    assert branch.status_code == 404
    [event] = await outbox(supply, "operation.risk_flag_raised")
    assert event["branch"] == "main" and event["source_branch"] == body["branch"]
    assert event["proposal"] == body["proposal"]["id"]
    # A fast-forward: the execution's own Revision is now on main, and the event names it.
    assert event["revisions"] == [body["revision"]] and event["head"] == merged.json()["merged_revision"]
    # A retry after the merge finds the merged Proposal, its branch gone.
    late = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert late.status_code == 200, late.text
    assert late.json()["status"] == "merged"
    assert late.headers["Idempotent-Replayed"] == "true"
    assert await supply.count("revisions") == revisions + 1
    assert len(await outbox(supply, "operation.risk_flag_raised")) == 1


async def test_a_second_execution_joins_the_open_proposal(supply: Stack) -> None:
    headers = await agent(supply)
    first = (await supply.http.post(FLAG, json=flag(), headers=headers)).json()
    second = await supply.http.post(FLAG, json=flag("low", intent="Both flags"), headers=headers)
    assert second.status_code == 202, second.text
    assert second.json()["proposal"]["id"] == first["proposal"]["id"]
    assert second.json()["proposal"]["created"] is False
    assert second.json()["branch_created"] is False
    proposal = (await supply.http.get(first["proposal"]["url"], headers=supply.admin)).json()
    assert len(proposal["executions"]) == 2
    assert proposal["description"].startswith("Both flags\n\n")


async def test_review_policy_on_a_work_branch_cuts_the_task_branch_from_it(supply: Stack) -> None:
    headers = await agent(supply)
    response = await supply.http.post(
        API + "/branches", json={"name": "work", "from": "main"}, headers=headers
    )
    assert response.status_code == 201, response.text
    refused = await supply.http.post(
        FLAG, json={**flag("critical"), "task": None, "intent": None, "branch": "work"}, headers=headers
    )
    assert refused.status_code == 409 and refused.json()["reason"] == "review-policy"
    body = await supply.http.post(FLAG, json={**flag("critical"), "branch": "work"}, headers=headers)
    assert body.status_code == 202, body.text
    doc = body.json()
    assert doc["target"] == "work"
    assert doc["approval"] == {"required": 1, "approvals": 0, "satisfied": False}
    assert "review-policy-needs-approval" in doc["merge"]["blockers"]


async def test_auto_merge_when_the_role_is_allowed_and_nothing_blocks(stack: Stack) -> None:
    schema = parse_yaml((SUPPLY / "schema.yaml").read_text())
    settings = {"agent_writes": {"allowed_roles_for_auto_merge": ["editor"], "auto_merge": True}}
    response = await stack.http.post(
        "/api/v1/domains",
        json={"name": "supply", "schema": schema, "settings": settings},
        headers=stack.admin,
    )
    assert response.status_code == 201, response.text
    imported = await stack.http.post(
        API + "/imports",
        json={
            "records": [{"kind": "Supplier", "values": {"supplier_code": "S-1001", "legal_name": "Kavsen"}}]
        },
        headers=stack.admin,
    )
    assert imported.status_code == 200, imported.text
    unprotect = await stack.http.patch(
        API + "/branches/main", json={"required_approvals": 0}, headers=stack.admin
    )
    assert unprotect.status_code == 200, unprotect.text
    headers = await agent(stack)
    response = await stack.http.post(FLAG, json=flag(), headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "merged"
    assert body["merge"]["performed"] is True and body["merge"]["allowed"] is True
    assert body["merged_revision"] == body["revision"]
    assert body["branch_deleted"] is True
    record = await stack.http.get(API + "/kinds/RiskFlag/records/RF-S-1001-high", headers=stack.admin)
    assert record.status_code == 200, record.text


async def test_task_refusals(supply: Stack) -> None:
    headers = await agent(supply, "svc_a")
    made = await supply.http.post(
        API + "/branches", json={"name": "agent/svc_a/taken", "from": "main"}, headers=supply.admin
    )
    assert made.status_code == 201
    taken = await supply.http.post(FLAG, json={**flag(), "task": "taken"}, headers=headers)
    assert taken.status_code == 409 and taken.json()["type"].endswith("already-exists"), taken.text
    for body, status in (
        ({**flag(), "task": "!!!"}, 422),
        ({**flag(), "task": "x" * 49}, 422),
        ({**flag(), "task": None, "auto_propose": True}, 422),
        ({**flag(), "auto_merge": "yes"}, 422),
        ({**flag(), "expected_head": "0" * 64}, 409),
    ):
        response = await supply.http.post(FLAG, json=body, headers=headers)
        assert response.status_code == status, (body, response.text)
    assert await supply.count("proposals") == 0
    # Nothing to change: answered like a direct write, and no branch.
    same = await supply.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 90}, "task": "noop"}, headers=headers
    )
    assert same.status_code == 200, same.text
    assert same.json()["revision"] is None
    assert (
        await supply.http.get(API + "/branches/agent/svc_a/noop", headers=supply.admin)
    ).status_code == 404


async def test_agent_branch_limit(supply: Stack) -> None:
    headers = await agent(supply, "svc_b")
    for index in range(10):
        response = await supply.http.post(
            UPDATE,
            json={"parameters": {"key": "S-1001", "risk_score": index}, "task": f"t{index}"},
            headers=headers,
        )
        assert response.status_code == 202, response.text
    over = await supply.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 50}, "task": "t10"}, headers=headers
    )
    assert over.status_code == 409 and over.json()["type"].endswith("agent-branch-limit"), over.text
    assert len(over.json()["branches"]) == 10
    reuse = await supply.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 51}, "task": "t3"}, headers=headers
    )
    assert reuse.status_code == 202, reuse.text


async def test_the_event_of_a_task_merged_by_a_merge_revision_names_it(supply: Stack) -> None:
    """Issue 15 §5: the operation event of a merged task Proposal has `revisions`; when main moved
    meanwhile, the merge Revision is what brought the execution there."""
    headers = await agent(supply)
    body = (await supply.http.post(FLAG, json=flag(), headers=headers)).json()
    moved = await supply.http.post(
        UPDATE, json={"parameters": {"key": "S-1002", "risk_score": 33}}, headers=supply.admin
    )
    assert moved.status_code == 200, moved.text
    reviewer = await supply.principal("usr_reviewer")
    await supply.grant("supply", "usr_reviewer", "reviewer")
    await supply.http.post(
        body["proposal"]["url"] + "/reviews", json={"decision": "approve"}, headers=reviewer
    )
    merged = await supply.http.post(body["proposal"]["url"] + "/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    merge_revision = merged.json()["merged_revision"]
    assert merge_revision not in (body["revision"], moved.json()["revision"])
    [event] = await outbox(supply, "operation.risk_flag_raised")
    assert event["revisions"] == [merge_revision] and event["head"] == merge_revision
