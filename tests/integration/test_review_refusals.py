"""Each refusal code of seed section 4 ("Writes that need review") and each merge blocker."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack
from tests.integration.test_agent_task_replays import auto_merging_supply, counts
from tests.integration.test_agent_tasks import API, FLAG, UPDATE, agent, flag


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = dict(response.json())
    assert body["type"].endswith(code), body
    assert response.headers["content-type"].startswith("application/problem+json")
    return body


async def test_refusals_create_nothing(supply: Stack) -> None:
    headers = await agent(supply)
    before = await counts(supply)

    plain = problem(
        await supply.http.post(
            UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 5}}, headers=headers
        ),
        409,
        "review-required",
    )
    assert (plain["branch"], plain["operation"], plain["reason"], plain["proposals"]) == (
        "main",
        "update_supplier",
        "protected-branch",
        [],
    )
    assert [n["action"] for n in plain["next"]] == ["name_a_task", "create_branch"]
    # The review policy refuses everyone, a user on main too; auto_propose: false keeps the plain 409.
    policy = problem(
        await supply.http.post(
            FLAG, json={**flag("critical"), "task": None, "intent": None}, headers=supply.admin
        ),
        409,
        "review-required",
    )
    assert policy["reason"] == "review-policy" and [n["action"] for n in policy["next"]] == ["name_a_task"]
    problem(
        await supply.http.post(FLAG, json={**flag(), "auto_propose": False}, headers=headers),
        409,
        "review-required",
    )
    # A user's task write needs auto_propose: true (the default holds for agent principals only).
    problem(await supply.http.post(FLAG, json=flag("critical"), headers=supply.admin), 409, "review-required")

    stale = problem(
        await supply.http.post(FLAG, json={**flag(), "expected_head": "0" * 64}, headers=headers),
        409,
        "stale-head",
    )
    assert stale["branch"] == "main" and stale["expected_head"] == "0" * 64
    invalid = problem(
        await supply.http.post(
            UPDATE, json={"parameters": {"key": "S-9999", "risk_score": 5}, "task": "nope"}, headers=headers
        ),
        422,
        "validation-failed",
    )
    assert invalid["issues"], invalid
    problem(
        await supply.http.post(
            UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 500}, "task": "nope"}, headers=headers
        ),
        422,
        "validation-failed",
    )
    dangling = problem(
        await supply.http.post(
            FLAG,
            json={**flag(), "parameters": {**flag()["parameters"], "supplier": "S-9999"}},
            headers=headers,
        ),
        422,
        "validation-failed",
    )
    assert dangling["issues"]
    assert await counts(supply) == before

    done = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert done.status_code == 202, done.text
    reused = problem(
        await supply.http.post(
            FLAG, json={**flag(), "parameters": {**flag()["parameters"], "reason": "other"}}, headers=headers
        ),
        422,
        "idempotency-key-reused",
    )
    assert reused["idempotency_key"] == flag()["idempotency_key"]


async def test_already_exists_for_another_creator_and_another_author(supply: Stack) -> None:
    headers = await agent(supply, "svc_a")
    made = await supply.http.post(
        API + "/branches", json={"name": "agent/svc_a/taken", "from": "main"}, headers=supply.admin
    )
    assert made.status_code == 201, made.text
    taken = problem(
        await supply.http.post(FLAG, json={**flag(), "task": "taken"}, headers=headers), 409, "already-exists"
    )
    assert taken["branch"] == "agent/svc_a/taken"
    assert await supply.count("proposals") == 0


async def test_blocker_changes_requested(supply: Stack) -> None:
    headers = await agent(supply)
    body = (await supply.http.post(FLAG, json=flag(), headers=headers)).json()
    url = body["proposal"]["url"]
    first, second = await supply.principal("usr_r1"), await supply.principal("usr_r2")
    await supply.grant("supply", "usr_r1", "reviewer")
    await supply.grant("supply", "usr_r2", "reviewer")

    async def review(who: dict[str, str], decision: str) -> dict[str, Any]:
        response = await supply.http.post(url + "/reviews", json={"decision": decision}, headers=who)
        assert response.status_code == 200, response.text
        return dict(response.json())

    state = await review(first, "request_changes")
    assert state["merge"]["blockers"] == ["approvals-pending", "changes-requested"]
    state = await review(second, "approve")
    assert state["approval"]["satisfied"] is True
    assert state["merge"] == {"mergeable": False, "blockers": ["changes-requested"]}
    refused = problem(await supply.http.post(url + "/merge", headers=supply.admin), 409, "merge-blocked")
    assert refused["blockers"] == ["changes-requested"]
    state = await review(first, "approve")  # the latest review of each reviewer counts
    assert state["merge"] == {"mergeable": True, "blockers": []}
    assert [n["action"] for n in state["next"]] == ["merge", "get_proposal"]
    merged = await supply.http.post(url + "/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text


async def test_blocker_review_policy_needs_approval(supply: Stack) -> None:
    headers = await agent(supply)
    work = await supply.http.post(API + "/branches", json={"name": "work", "from": "main"}, headers=headers)
    assert work.status_code == 201, work.text
    body = (await supply.http.post(FLAG, json={**flag("critical"), "branch": "work"}, headers=headers)).json()
    assert body["status"] == "proposed"
    assert body["merge"]["blockers"] == ["approvals-pending", "review-policy-needs-approval"]
    assert [n["action"] for n in body["next"]] == ["await_review", "get_proposal"]
    url = body["proposal"]["url"]
    refused = problem(await supply.http.post(url + "/merge", headers=supply.admin), 409, "merge-blocked")
    assert "review-policy-needs-approval" in refused["blockers"]
    reviewer = await supply.principal("usr_r1")
    await supply.grant("supply", "usr_r1", "reviewer")
    approved = await supply.http.post(url + "/reviews", json={"decision": "approve"}, headers=reviewer)
    assert approved.json()["merge"] == {"mergeable": True, "blockers": []}
    merged = await supply.http.post(url + "/merge", headers=supply.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    flag_on_work = await supply.http.get(
        API + "/kinds/RiskFlag/records/RF-S-1001-critical", params={"branch": "work"}, headers=supply.admin
    )
    assert flag_on_work.status_code == 200, flag_on_work.text


async def test_automatic_merges_never_skip_a_blocker(stack: Stack) -> None:
    await auto_merging_supply(stack)
    headers = await agent(stack)
    # The Operation's own policy asked for the review: an approval is needed even with none required.
    critical = await stack.http.post(FLAG, json={**flag("critical"), "task": "crit"}, headers=headers)
    assert critical.status_code == 202, critical.text
    assert critical.json()["merge"] == {
        "requested": True,
        "allowed": True,
        "performed": False,
        "blockers": ["approvals-pending", "review-policy-needs-approval"],
    }
    # A role that is not in allowed_roles_for_auto_merge: proposed, and nothing blocks a manual merge.
    other = await stack.principal("svc_other", type="service")
    await stack.grant("supply", "svc_other", "admin")
    limited = await stack.http.post(FLAG, json={**flag(), "task": "limited"}, headers=other)
    assert limited.status_code == 202, limited.text
    assert limited.json()["merge"] == {
        "requested": True,
        "allowed": False,
        "performed": False,
        "blockers": [],
    }
    assert [n["action"] for n in limited.json()["next"]] == ["merge", "get_proposal"]
    # The approvals the target requires are in before an automatic merge.
    protect = await stack.http.patch(
        API + "/branches/main", json={"required_approvals": 1}, headers=stack.admin
    )
    assert protect.status_code == 200, protect.text
    pending = await stack.http.post(FLAG, json={**flag("low"), "task": "pending"}, headers=headers)
    assert pending.status_code == 202, pending.text
    assert pending.json()["merge"]["blockers"] == ["approvals-pending"]
    assert pending.json()["merge"]["performed"] is False


async def test_open_conflicts_block_an_automatic_merge(stack: Stack) -> None:
    await auto_merging_supply(stack)
    headers = await agent(stack)
    first = await stack.http.post(
        UPDATE,
        json={"parameters": {"key": "S-1001", "risk_score": 5}, "task": "risk", "auto_merge": False},
        headers=headers,
    )
    assert first.status_code == 202, first.text
    assert first.json()["merge"] == {"requested": False, "allowed": True, "performed": False, "blockers": []}
    direct = await stack.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "risk_score": 70}}, headers=stack.admin
    )
    assert direct.status_code == 200, direct.text
    second = await stack.http.post(
        UPDATE, json={"parameters": {"key": "S-1001", "tier": 2}, "task": "risk"}, headers=headers
    )
    assert second.status_code == 202, second.text
    body = second.json()
    assert body["status"] == "conflicts"
    assert body["attempt"]["result"] == "conflicts" and body["attempt"]["counts"] == {"both_changed": 1}
    assert body["merge"]["performed"] is False and "open-conflicts" in body["merge"]["blockers"]
    assert "resolve_conflicts" in [n["action"] for n in body["next"]]
    url = body["proposal"]["url"]
    [conflict] = (await stack.http.get(url + "/conflicts", headers=headers)).json()["conflicts"]
    resolved = await stack.http.post(
        f"{url}/conflicts/{conflict['id']}/resolve", json={"resolution": "theirs"}, headers=headers
    )
    assert resolved.status_code == 200, resolved.text
    merged = await stack.http.post(url + "/merge", headers=stack.admin)
    assert merged.status_code == 200 and merged.json()["status"] == "merged", merged.text
    record = (await stack.http.get(API + "/kinds/Supplier/records/S-1001", headers=stack.admin)).json()
    assert (record["values"]["risk_score"], record["values"]["tier"]) == ("5", "2")


async def test_a_dry_run_that_will_need_review_runs_and_says_so(supply: Stack) -> None:
    """Issue 15 §5: "dry run first" holds on protected main without a task: the dry run answers 200
    with what it would do, and `review` names the reason and next steps of the 409 the real
    execution would get. Nothing is stored."""
    headers = await agent(supply)
    before = await counts(supply)
    body = {"parameters": {"key": "S-1001", "risk_score": 5}, "dry_run": True}
    dry = await supply.http.post(UPDATE, json=body, headers=headers)
    assert dry.status_code == 200, dry.text
    answer = dry.json()
    assert answer["status"] == "dry_run" and answer["valid"] is True and answer["branch"] == "main"
    assert [c["ref"] for c in answer["changes"]] == ["Supplier/S-1001"]
    review = answer["review"]
    assert review["required"] is True and review["reason"] == "protected-branch"
    assert [n["action"] for n in review["next"]] == ["name_a_task", "create_branch"]
    real = problem(
        await supply.http.post(UPDATE, json={**body, "dry_run": False}, headers=headers),
        409,
        "review-required",
    )
    assert (real["reason"], real["next"]) == (review["reason"], review["next"])
    # The review policy: the same, with its own reason.
    policy = await supply.http.post(
        FLAG, json={**flag("critical"), "task": None, "intent": None, "dry_run": True}, headers=supply.admin
    )
    assert policy.status_code == 200, policy.text
    assert policy.json()["review"]["reason"] == "review-policy"
    # A dry run that needs no review says nothing of it.
    plain = await supply.http.post(UPDATE, json=body, headers=supply.admin)
    assert plain.status_code == 200 and "review" not in plain.json()
    assert await counts(supply) == before
