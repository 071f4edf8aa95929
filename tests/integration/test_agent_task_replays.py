"""Agent task writes retried after a crash between their steps (seed section 4: "The steps above are
separate transactions, and a retry with the same key finds the commit, the branch and the Proposal").

The store is real; only the control flow is cut: the step after the one under test fails once, in
process, and the retry under the same idempotency key must find what the steps before it did.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from lorebase_keeper.operations import agent_tasks

from lorebase.schema import parse_yaml
from tests.integration.conftest import SUPPLY, Stack
from tests.integration.test_agent_tasks import API, FLAG, agent, flag, outbox

BRANCH = "agent/svc_01j9x4k2/q4-audit"


class Crash(Exception):
    """The keeper process dying between two steps."""


def once(real: Callable[..., Awaitable[Any]], *, when: Callable[..., bool] = lambda *a, **k: True) -> Any:
    """`real`, failing the first time `when` holds for its arguments."""
    state = {"crashed": False}

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not state["crashed"] and when(*args, **kwargs):
            state["crashed"] = True
            raise Crash("simulated crash")
        return await real(*args, **kwargs)

    return wrapper


def after(real: Callable[..., Awaitable[Any]], name: str) -> Any:
    """`Database.run_interaction`, crashing once right after the transaction `name` committed."""
    state = {"crashed": False}

    async def wrapper(txn_name: str, *args: Any, **kwargs: Any) -> Any:
        result = await real(txn_name, *args, **kwargs)
        if txn_name == name and not state["crashed"]:
            state["crashed"] = True
            raise Crash("simulated crash")
        return result

    return wrapper


async def counts(stack: Stack) -> dict[str, int]:
    return {
        table: await stack.count(table) for table in ("revisions", "proposals", "branches", "invocations")
    }


async def crashed(stack: Stack, headers: dict[str, str], body: dict[str, Any]) -> None:
    response = await stack.http.post(FLAG, json=body, headers=headers)
    assert response.status_code == 500, response.text


async def test_crash_before_the_task_branch(supply: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = await agent(supply)
    before = await counts(supply)
    monkeypatch.setattr(agent_tasks, "_task_branch", once(agent_tasks._task_branch))
    await crashed(supply, headers, flag())
    assert await counts(supply) == before  # the dry run created nothing
    retry = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert retry.status_code == 202, retry.text
    assert retry.json()["replayed"] is False and "Idempotent-Replayed" not in retry.headers
    assert retry.json()["branch_created"] is True
    after_ = await counts(supply)
    assert after_["revisions"] == before["revisions"] + 1
    assert after_["proposals"] == before["proposals"] + 1


async def test_crash_after_the_task_branch(supply: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = await agent(supply)
    before = await counts(supply)
    committer = supply.rt.committer
    monkeypatch.setattr(
        committer, "run", once(committer.run, when=lambda _d, branch, *a, **k: branch == BRANCH)
    )
    await crashed(supply, headers, flag())
    assert await counts(supply) == {**before, "branches": before["branches"] + 1}
    retry = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert retry.status_code == 202, retry.text
    body = retry.json()
    assert body["branch"] == BRANCH and body["branch_created"] is False  # found, not made again
    assert body["replayed"] is False  # the execution had not been done
    assert await counts(supply) == {
        "revisions": before["revisions"] + 1,
        "proposals": before["proposals"] + 1,
        "branches": before["branches"] + 1,
        "invocations": before["invocations"] + 1,
    }


async def test_crash_after_the_commit(supply: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = await agent(supply)
    before = await counts(supply)
    monkeypatch.setattr(agent_tasks, "_propose_and_merge", once(agent_tasks._propose_and_merge))
    await crashed(supply, headers, flag())
    done = await counts(supply)
    assert done["revisions"] == before["revisions"] + 1 and done["proposals"] == before["proposals"]
    retry = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert retry.status_code == 202, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    body = retry.json()
    assert body["replayed"] is True and body["status"] == "proposed"
    assert body["proposal"]["created"] is True
    assert await counts(supply) == {**done, "proposals": before["proposals"] + 1}
    proposal = (await supply.http.get(body["proposal"]["url"], headers=supply.admin)).json()
    [execution] = proposal["executions"]
    assert execution["invocation_id"] == body["invocation_id"]
    assert execution["revision"] == body["revision"]
    # Merged, the operation event is written once, naming the original invocation.
    reviewer = await supply.principal("usr_reviewer")
    await supply.grant("supply", "usr_reviewer", "reviewer")
    review = await supply.http.post(
        body["proposal"]["url"] + "/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert review.status_code == 200, review.text
    merged = await supply.http.post(body["proposal"]["url"] + "/merge", headers=supply.admin)
    assert merged.status_code == 200, merged.text
    [event] = await outbox(supply, "operation.risk_flag_raised")
    assert event["invocation_id"] == body["invocation_id"]


async def test_crash_after_the_proposal(supply: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = await agent(supply)
    before = await counts(supply)
    monkeypatch.setattr(supply.rt.db, "run_interaction", after(supply.rt.db.run_interaction, "task_proposal"))
    await crashed(supply, headers, flag())
    done = await counts(supply)
    assert done["proposals"] == before["proposals"] + 1
    retry = await supply.http.post(FLAG, json=flag(), headers=headers)
    assert retry.status_code == 202, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json()["proposal"]["created"] is False
    assert await counts(supply) == done
    proposal = (await supply.http.get(retry.json()["proposal"]["url"], headers=supply.admin)).json()
    assert len(proposal["executions"]) == 1


async def auto_merging_supply(stack: Stack) -> None:
    """The supply schema in a Domain whose editors' task writes merge at once (main needs no approval)."""
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


async def test_crash_after_the_merge(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    await auto_merging_supply(stack)
    headers = await agent(stack)
    before = await counts(stack)
    monkeypatch.setattr(stack.rt.db, "run_interaction", after(stack.rt.db.run_interaction, "task_proposal"))
    await crashed(stack, headers, flag())
    done = await counts(stack)
    assert done["revisions"] == before["revisions"] + 1
    assert done["branches"] == before["branches"]  # merged, and the task branch deleted
    retry = await stack.http.post(FLAG, json=flag(), headers=headers)
    assert retry.status_code == 200, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    body = retry.json()
    assert body["status"] == "merged" and body["branch_deleted"] is True
    assert body["merged_revision"] == body["revision"]
    assert await counts(stack) == done
    assert len(await outbox(stack, "operation.risk_flag_raised")) == 1
    main = (await stack.http.get(API + "/branches/main", headers=stack.admin)).json()
    assert main["head"] == body["merged_revision"]
