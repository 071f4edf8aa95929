"""Executing an Operation (POST /operations/{operation}/execute): on the branch directly, or, when the
request names a task or asks for a Proposal, as an agent task (agent_tasks.py).
"""

from __future__ import annotations

from lorebase.contract.writes import Execution
from lorebase.problems import invalid
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.operations.agent_tasks import execute_task
from lorebase_keeper.operations.prepare import parse_execute, prepare
from lorebase_keeper.operations.review import review_required
from lorebase_keeper.operations.work import dry_run, make_work
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import Outcome


async def execute(
    rt: Runtime, access: Access, domain: Domain, name: str, body: Execution, header_key: str
) -> Outcome:
    """Execute Operation `name` as `body` asks; `header_key`: the Idempotency-Key header ("": none)."""
    request = parse_execute(body, header_key)
    branch = check_branch_name(request.branch or domain.default_branch)
    if request.task is not None or request.auto_propose:
        return await execute_task(rt, access, domain, name, request, branch)
    p = prepare(access, domain, name, request, branch)
    p.vault = await rt.vault.writer(domain)
    if p.policy_review and not request.dry_run:  # a dry run runs, and says so (work.py)
        raise review_required(domain, name, branch, "review-policy")
    if p.issues and not request.dry_run:
        raise invalid(p.issues)
    work = make_work(p, branch, dry_run=request.dry_run)
    if request.dry_run:
        return await dry_run(rt, work, domain.id, branch)
    return await rt.committer.run(domain.id, branch, work, prefetch=p.prefetch(), schema=domain.stored_digest)


__all__ = ["execute"]
