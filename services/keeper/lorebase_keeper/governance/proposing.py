"""An accept that needs review: the merge of two Records on a task branch, with a Proposal.

As an agent's Operation write on a protected branch does (lorebase_keeper.operations.agent_tasks):
the task branch `<branch_prefix><principal>/<task>` (task: the body's, else `reconcile-<candidate>`)
is created from the target head or reused, the merge Revision is committed there, and the one open
Proposal of the task branch into the target is opened or the execution added to it, then tried
(never merged here: a reviewer approves it and merges). The answer names the task branch, the
Proposal and the calls that move it on (`next`); the candidate's `result` names them too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from lorebase.contract.reconciliation import Accept
from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.governance.reconciliation import OPERATION, candidate_document
from lorebase_keeper.merge import touched_kinds
from lorebase_keeper.operations.agent_tasks import normalise_task, open_task_branch
from lorebase_keeper.proposals import (
    approval_of,
    attempt_document,
    attempt_merge,
    next_steps,
    open_proposal,
    proposal_summary,
)
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import Outcome
from lorebase_store import CandidateRow, ProposalRow, Txn


async def propose_merge(
    rt: Runtime,
    access: Access,
    domain: Domain,
    row: CandidateRow,
    body: Accept,
    work_on: Callable[[str], Any],
    *,
    invocation_id: str,
    at: datetime,
) -> Outcome:
    """Commit the merge (`work_on(task_branch)`) on the task branch and open or extend its Proposal."""
    writes = domain.settings.model.keeper.agent_writes
    principal = access.principal
    target = row.branch
    if not writes.enabled:
        raise Problem(
            409,
            "review-required",
            f"branch {target!r} is protected: agent principals write to it through a Proposal, and task "
            "writes are disabled here (keeper.agent_writes.enabled); ask a user with operation.execute "
            "to accept the candidate",
            branch=target,
            reason="protected-branch",
        )
    task = normalise_task(domain, body.task or f"reconcile-{row.id}")
    task_branch = check_branch_name(f"{writes.branch_prefix}{principal.id.lower()}/{task}")
    access.require("branch.create", task_branch)
    access.require("proposal.create", task_branch)
    made = await rt.db.run_interaction(
        "task_branch", open_task_branch, domain, access, target, task_branch, at, False
    )
    assert made is not None
    committed = await rt.committer.run(
        domain.id,
        task_branch,
        work_on(task_branch),
        prefetch={row.kind: [row.record_a, row.record_b]},
        schema=domain.stored_digest,
    )
    document: dict[str, Any] = await rt.db.run_interaction(
        "reconciliation_proposal",
        _propose,
        domain,
        access,
        row,
        body,
        task,
        task_branch,
        committed,
        made[1],
        at,
    )
    return Outcome(202, document, committed["revision"], {})


async def _propose(
    txn: Txn,
    domain: Domain,
    access: Access,
    row: CandidateRow,
    body: Accept,
    task: str,
    task_branch: str,
    committed: dict[str, Any],
    branch_created: bool,
    at: datetime,
) -> dict[str, Any]:
    principal = access.principal
    target = row.branch
    writes = domain.settings.model.keeper.agent_writes
    removed = committed["removed"].split("/", 1)[1]
    execution = {
        "invocation_id": committed["invocation_id"],
        "operation": OPERATION,
        "revision": committed["revision"],
        "principal": principal.id,
        "at": iso(at),
        "summary": f'- {OPERATION}(keep="{body.keep}", remove="{removed}") [{committed["invocation_id"]}]',
        "events": [],
    }
    intro = f"Reconciliation {row.id}: merge {row.kind}/{removed} into {row.kind}/{body.keep}."
    source = await txn.get_branch(domain.id, task_branch)
    target_row = await txn.get_branch(domain.id, target)
    if source is None or target_row is None:
        raise Problem(409, "conflict", f"task branch {task_branch!r} or {target!r} is gone; retry")
    existing = await txn.open_proposal(domain.id, task_branch, target)
    created = existing is None
    proposal: ProposalRow | None
    if existing is None:
        proposal = await open_proposal(
            txn,
            domain,
            source=source,
            target=target,
            title=writes.title_template.format(principal=principal.id, task=task),
            description=f"{intro}\n\nExecutions:\n{execution['summary']}",
            author=principal.id,
            at=at,
            task=task,
            intent=body.reason,
            executions=[execution],
        )
        if proposal is None:
            raise Problem(409, "conflict", "a Proposal for this task was opened concurrently; retry")
    else:
        if existing.author != principal.id:
            raise Problem(
                409,
                "already-exists",
                f"Proposal {existing.id} from {task_branch!r} belongs to {existing.author}; name another task",
                proposal=existing.id,
            )
        executions = [*existing.executions, execution]
        await txn.update_proposal(
            existing.id,
            executions=executions,
            description=existing.description + "\n" + execution["summary"],
            kinds=await touched_kinds(txn, domain, source, target_row),
            updated_at=at,
        )
        proposal = existing
    proposal = await txn.get_proposal(domain.id, proposal.id, for_update=True)
    assert proposal is not None
    outcome = await attempt_merge(txn, domain, proposal, by=principal.id, perform=False, at=at)
    proposal = await txn.get_proposal(domain.id, proposal.id)
    assert proposal is not None
    approval = await approval_of(txn, domain, proposal, target_row)
    result = {**committed["candidate"]["result"], "proposal": proposal.id, "target": target}
    await txn.decide_candidate(
        domain.id, row.id, status="accepted", principal=principal.id, at=at, reason=body.reason, result=result
    )
    await txn.audit(
        principal.id,
        "reconciliation.propose",
        at,
        domain=domain.name,
        target=row.id,
        details={"task": task, "branch": task_branch, "target": target, "proposal": proposal.id},
    )
    decided = await txn.get_candidate(domain.id, row.id)
    assert decided is not None
    conflicts = outcome.attempt.result == "conflicts"
    return {
        **committed,
        "status": "conflicts" if conflicts else "proposed",
        "candidate": candidate_document(domain, readable(access, domain, target), decided),
        "branch": task_branch,
        "target": target,
        "proposal": proposal_summary(domain, proposal, created),
        "approval": approval.document(),
        "attempt": attempt_document(outcome.attempt),
        "merge": {"requested": False, "allowed": False, "performed": False, "blockers": outcome.blockers},
        "branch_created": branch_created,
        "next": next_steps(domain, proposal, approval, outcome.blockers),
    }


__all__ = ["propose_merge"]
