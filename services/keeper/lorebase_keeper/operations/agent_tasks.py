"""Agent task writes: a write that needs review runs on a task branch and opens a Proposal, in one call.

The steps of the seed (section 4, "Writes that need review"), each its own transaction:

1. the request is checked and dry-run against the target (422, 409 stale-head; nothing created);
2. the task branch `<branch_prefix><principal>/<task>` is created from the target head, or reused;
3. the Operation runs there with the caller's idempotency key (its events wait for the merge);
4. the one open Proposal of the task branch into the target is opened, or the execution added to it;
5. the merge, only when every condition holds (auto_merge, a role in the Domain's auto-merge list,
   no open Conflict, the approvals in, an approval when the review came from the policy).

A retry under the same idempotency key finds the commit (its receipt), the branch and the Proposal,
even one that merged and lost its branch, instead of executing again.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from lorebase.contract.writes import Execution
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem, invalid
from lorebase.settings_model import AgentWrites
from lorebase_keeper.access import Access
from lorebase_keeper.branches import fork_branch
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.merge import touched_kinds
from lorebase_keeper.operations.prepare import Prepared, prepare
from lorebase_keeper.operations.review import needs_review, review_required
from lorebase_keeper.operations.work import dry_run, make_work
from lorebase_keeper.proposals import (
    approval_of,
    attempt_document,
    attempt_merge,
    next_steps,
    open_proposal,
    proposal_summary,
)
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import Outcome, check_expected_head, replay
from lorebase_store import BranchRow, ProposalRow, Txn

_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")


def agent_writes(domain: Domain) -> AgentWrites:
    """The Domain's `keeper.agent_writes` settings (its overrides applied)."""
    return domain.settings.model.keeper.agent_writes


def normalise_task(domain: Domain, task: str) -> str:
    """`Audit Q4` -> `audit-q4`: lower case, runs of other characters as one '-'."""
    slug = _NOT_SLUG.sub("-", task.strip().lower()).strip("-.")
    limit = agent_writes(domain).max_task_length
    if not slug:
        raise Problem(
            422,
            "validation-failed",
            "task names the piece of work in a few words (letters and digits), e.g. q4-audit",
            issues=[{"path": "task", "rule": "task", "message": "a short slug such as q4-audit"}],
        )
    if len(slug) > limit:
        raise Problem(
            422,
            "validation-failed",
            f"task is at most {limit} characters once normalised (max_task_length); {slug!r} has {len(slug)}",
            issues=[{"path": "task", "rule": "max_task_length", "message": f"at most {limit} characters"}],
        )
    return slug


def _summary(domain: Domain, p: Prepared) -> str:
    """One line of a Proposal description: `- op(k="v", ...) [inv_...]`."""
    chars = agent_writes(domain).summary_value_chars
    if agent_writes(domain).summary_parameter_values:
        parts = []
        for name, value in sorted(p.parameters.items()):
            spec = p.operation.parameters.get(name)
            shown = "***" if spec is not None and spec.sensitivity else str(value)
            if len(shown) > chars:
                shown = shown[: max(chars - 1, 0)] + "…"
            parts.append(f'{name}="{shown}"')
        args = ", ".join(parts)
    else:
        args = ", ".join(sorted(p.parameters))
    return f"- {p.name}({args}) [{p.invocation_id}]"


def _description(domain: Domain, intent: str | None, executions: list[dict[str, Any]]) -> str:
    limit = agent_writes(domain).max_summary_operations
    lines = [e["summary"] for e in executions[:limit]]
    if len(executions) > limit:
        lines.append(f"- … and {len(executions) - limit} more")
    head = (intent.strip() + "\n\n") if intent else ""
    return head + "Executions:\n" + "\n".join(lines)


async def execute_task(
    rt: Runtime, access: Access, domain: Domain, name: str, request: Execution, target: str
) -> Outcome:
    """Execute on `target`, or, when the write needs review, on the task branch with a Proposal."""
    principal = access.principal
    writes = agent_writes(domain)
    is_agent = principal.type in writes.principal_types
    auto_propose = request.auto_propose
    if auto_propose is None:
        auto_propose = writes.auto_propose and is_agent
    if request.auto_propose and not request.task:
        raise Problem(
            422,
            "validation-failed",
            "auto_propose needs a task: name the piece of work (e.g. q4-audit)",
            issues=[{"path": "task", "rule": "required", "message": "auto_propose: true needs a task"}],
        )
    task = normalise_task(domain, request.task) if request.task else None
    p = prepare(access, domain, name, request, target)
    p.vault = await rt.vault.writer(domain)
    if p.issues and not request.dry_run:
        raise invalid(p.issues)
    target_row = await rt.db.read("get_branch", lambda txn: txn.get_branch(domain.id, target))
    if target_row is None:
        raise Problem(404, "not-found", f"unknown branch {target!r}")
    reason = needs_review(p, target_row)
    if reason is None:  # nothing to review: a direct write, as without a task
        work = make_work(p, target, dry_run=request.dry_run)
        if request.dry_run:
            return await dry_run(rt, work, domain.id, target)
        return await rt.committer.run(
            domain.id, target, work, prefetch=p.prefetch(), schema=domain.stored_digest
        )
    if not auto_propose or task is None or not writes.enabled:
        raise review_required(domain, name, target, reason)
    task_branch = check_branch_name(f"{writes.branch_prefix}{principal.id.lower()}/{task}")
    access.require("branch.create", task_branch)
    access.require("proposal.create", task_branch)
    at = utc_now()

    # A retry finds what the first attempt did.
    receipt = None
    if p.key is not None:
        receipt = await rt.db.read(
            "receipt", lambda txn: txn.get_receipt(domain.id, principal.id, p.key or "")
        )
    if receipt is None:
        # 1. The dry run on the target: the same checks as a direct write; nothing is created.
        check = await dry_run(rt, make_work(p, target, dry_run=True, review=False), domain.id, target)
        expected = request.expected_head
        check_expected_head(expected, target, target_row.head)
        if check.document["violations"]:
            raise invalid(check.document["violations"])
        if request.dry_run:
            return Outcome(200, {**check.document, "task_branch": task_branch, "target": target}, None, {})
        if not check.document["changes"]:
            unchanged: dict[str, Any] = {
                "status": "committed",
                "operation": name,
                "branch": target,
                "invocation_id": p.invocation_id,
                "revision": None,
                "revisions": [],
                "head": target_row.head,
                "edit_count": len(p.edit_docs),
                "changes": [],
                "replayed": False,
            }
            return Outcome(200, unchanged, None, {})
    elif receipt.response.get("branch") != task_branch or receipt.request_digest != p.digest:
        return replay(receipt, p.digest, p.key or "")

    # 2. The task branch.
    made = await rt.db.run_interaction(
        "task_branch", _task_branch, domain, access, target, task_branch, at, receipt is not None
    )
    # 3. The Operation on the task branch (a replay returns the original commit).
    deferred: list[tuple[str, dict[str, Any]]] = []
    if made is None:  # the branch is gone: its Proposal merged or closed
        assert receipt is not None
        committed = Outcome(receipt.status, dict(receipt.response), receipt.revision, {})
        replayed = True
    else:
        work = make_work(p, task_branch, dry_run=False, review=False, deferred=deferred)
        committed = await rt.committer.run(
            domain.id, task_branch, work, prefetch=p.prefetch(), schema=domain.stored_digest
        )
        replayed = bool(committed.document.get("replayed"))
    invocation = str(committed.document.get("invocation_id") or p.invocation_id)
    if replayed and not deferred:
        deferred = p.events(task_branch)
    # 4 and 5. The Proposal, and the merge when every condition holds.
    document: dict[str, Any] = await rt.db.run_interaction(
        "task_proposal",
        _propose_and_merge,
        domain,
        access,
        p,
        request,
        task,
        task_branch,
        target,
        invocation,
        committed.document,
        [{**doc, "invocation_id": invocation} for _, doc in deferred],
        reason,
        made is not None and made[1],
        at,
    )
    document["replayed"] = replayed
    if document["status"] == "merged" and not replayed:  # the target moved: try its other Proposals
        rt.moves.moved(domain.id, target)
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    status = 200 if document["status"] == "merged" else 202
    revision = document.get("merged_revision") or document.get("revision")
    return Outcome(status, document, revision if isinstance(revision, str) else None, headers)


async def _task_branch(
    txn: Txn, domain: Domain, access: Access, target: str, name: str, at: datetime, retry: bool
) -> tuple[BranchRow, bool] | None:
    """The task branch, created from the target head or reused; None when a retry finds it gone."""
    principal = access.principal
    # Both rows locked in name order, as a merge locks them (merge.lock_pair): no deadlock.
    locked = {n: await txn.get_branch(domain.id, n, for_update=True) for n in sorted((target, name))}
    base = locked[target]
    if base is None:
        raise Problem(404, "not-found", f"unknown branch {target!r}")
    row = locked[name]
    if row is None and name < target:  # created while this waited for the target's lock?
        row = await txn.get_branch(domain.id, name, for_update=True)
    if row is not None:
        if row.created_by != principal.id:
            raise Problem(
                409,
                "already-exists",
                f"branch {name!r} exists and another principal created it; name another task",
                branch=name,
            )
        return row, False
    if retry:
        return None
    writes = agent_writes(domain)
    prefix = f"{writes.branch_prefix}{principal.id.lower()}/"
    mine = await txn.count_branches_like(domain.id, prefix, principal.id)
    limit = writes.max_open_branches_per_principal
    if len(mine) >= limit:
        raise Problem(
            409,
            "agent-branch-limit",
            f"{principal.id} holds {len(mine)} task branches (max_open_branches_per_principal is {limit}); "
            "reuse one as the task, or merge or close their Proposals",
            branches=mine,
        )
    created = await fork_branch(txn, domain, base, name, mode=writes.branch_mode, by=principal.id, at=at)
    if created is None:  # a concurrent first attempt made it
        raise Problem(409, "already-exists", f"branch {name!r} was just created; retry", branch=name)
    return created, True


# The same step for other task writes (a reconciliation accept: governance/proposing.py); the
# module keeps calling `_task_branch` by name, which the replay tests replace.
open_task_branch = _task_branch


async def _propose_and_merge(
    txn: Txn,
    domain: Domain,
    access: Access,
    p: Prepared,
    request: Execution,
    task: str,
    task_branch: str,
    target: str,
    invocation: str,
    committed: dict[str, Any],
    events: list[dict[str, Any]],
    reason: str,
    branch_created: bool,
    at: datetime,
) -> dict[str, Any]:
    principal = access.principal
    await txn.audit(
        principal.id,
        "operation.propose",
        at,
        domain=domain.name,
        target=p.name,
        details={"task": task, "branch": task_branch, "target": target, "invocation_id": invocation},
    )
    proposal = await txn.proposal_with_invocation(domain.id, invocation)
    created = False
    if proposal is None:
        execution = {
            "invocation_id": invocation,
            "operation": p.name,
            "revision": committed.get("revision"),
            "principal": principal.id,
            "at": iso(at),
            "summary": _summary(domain, p),
            "events": events,
        }
        source = await txn.get_branch(domain.id, task_branch)
        if source is None:
            raise Problem(409, "conflict", f"task branch {task_branch!r} is gone; retry the execution")
        # Requests racing on one task converge on one Proposal: an insert that finds one opened
        # concurrently (and committed: READ COMMITTED sees it on the next statement) joins it.
        for _ in range(3):
            existing = await txn.open_proposal(domain.id, task_branch, target)
            if existing is None:
                title = agent_writes(domain).title_template.format(principal=principal.id, task=task)
                opened = await open_proposal(
                    txn,
                    domain,
                    source=source,
                    target=target,
                    title=title,
                    description=_description(domain, request.intent, [execution]),
                    author=principal.id,
                    at=at,
                    task=task,
                    intent=request.intent,
                    review_policy=reason == "review-policy",
                    executions=[execution],
                )
                if opened is not None:
                    proposal, created = opened, True
                    break
                continue
            existing = await _reload(txn, domain, existing.id, lock=True)
            if existing.status != "open":  # merged or closed meanwhile
                continue
            if existing.author != principal.id:
                raise Problem(
                    409,
                    "already-exists",
                    f"Proposal {existing.id} from {task_branch!r} belongs to {existing.author}",
                    proposal=existing.id,
                )
            proposal = existing
            # A retry racing its first attempt may have added this execution while we waited for the lock.
            if any(e.get("invocation_id") == invocation for e in existing.executions):
                break
            executions = [*existing.executions, execution]
            intent = request.intent if request.intent is not None else existing.intent
            await txn.update_proposal(
                existing.id,
                executions=executions,
                intent=intent,
                description=_description(domain, intent, executions),
                review_policy=existing.review_policy or reason == "review-policy",
                kinds=await touched_kinds(txn, domain, source, await _branch(txn, domain, target)),
                updated_at=at,
            )
            await txn.audit(
                principal.id,
                "proposal.update",
                at,
                domain=domain.name,
                target=existing.id,
                details={"invocation_id": invocation},
            )
            break
        if proposal is None:
            raise Problem(409, "conflict", "a Proposal for this task was opened concurrently; retry")
    proposal = await _reload(txn, domain, proposal.id, lock=True)

    auto_merge = request.auto_merge
    if auto_merge is None:
        auto_merge = agent_writes(domain).auto_merge
    allowed_roles = set(agent_writes(domain).allowed_roles_for_auto_merge)
    allowed = bool(allowed_roles & set(access.roles(task_branch)))
    attempt = None
    performed = False
    branch_deleted = False
    blocked: list[str] = []
    if proposal.status == "open":
        outcome = await attempt_merge(
            txn, domain, proposal, by=principal.id, perform=bool(auto_merge and allowed), at=at
        )
        attempt, performed, branch_deleted = outcome.attempt, outcome.performed, outcome.branch_deleted
        blocked = outcome.blockers
        proposal = await _reload(txn, domain, proposal.id)
    else:
        attempt = await txn.latest_attempt(proposal.id)
    target_row = await txn.get_branch(domain.id, target)
    approval = await approval_of(txn, domain, proposal, target_row)
    status = (
        "merged"
        if proposal.status == "merged"
        else (
            "conflicts"
            if attempt is not None and attempt.result == "conflicts" and proposal.status == "open"
            else "proposed"
        )
    )
    return {
        "status": status,
        "operation": p.name,
        "branch": task_branch,
        "target": target,
        "invocation_id": invocation,
        "revision": committed.get("revision"),
        "revisions": committed.get("revisions") or [],
        "edit_count": committed.get("edit_count", len(p.edit_docs)),
        "replayed": False,
        "proposal": proposal_summary(domain, proposal, created),
        "approval": approval.document(),
        "attempt": attempt_document(attempt),
        "merge": {
            "requested": bool(auto_merge),
            "allowed": allowed,
            "performed": performed,
            "blockers": [b for b in blocked if proposal.status == "open"],
        },
        "merged_revision": proposal.merged_revision,
        "branch_created": branch_created,
        "branch_deleted": branch_deleted
        or (proposal.status != "open" and await txn.get_branch(domain.id, task_branch) is None),
        "warnings": [],
        "next": next_steps(domain, proposal, approval, blocked),
    }


async def _branch(txn: Txn, domain: Domain, name: str) -> BranchRow:
    row = await txn.get_branch(domain.id, name)
    if row is None:
        raise Problem(404, "not-found", f"unknown branch {name!r}")
    return row


async def _reload(txn: Txn, domain: Domain, proposal_id: str, *, lock: bool = False) -> ProposalRow:
    row = await txn.get_proposal(domain.id, proposal_id, for_update=lock)
    assert row is not None
    return row


__all__ = ["execute_task", "normalise_task", "open_task_branch"]
