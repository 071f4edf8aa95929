"""Why a write needs a review (a protected branch and an agent principal, or the Operation's review
policy), and the 409 review-required that names the calls that move it forward. A dry run is never
refused for it (the seed's loop is "dry run first", and a dry run changes nothing): it runs, and its
answer carries the same reason and next steps as `review` (review_note).
"""

from __future__ import annotations

from typing import Any

from lorebase.problems import Problem
from lorebase_keeper.domains import Domain
from lorebase_keeper.operations.prepare import Prepared
from lorebase_store import BranchRow


def _next_for_review(domain: Domain, operation: str, reason: str) -> list[dict[str, Any]]:
    """The calls that move a refused write forward: name a task (a task branch and a Proposal in
    one call), or write on a work branch of one's own."""
    steps = [
        {
            "action": "name_a_task",
            "detail": "Send the execution again with a task (and an intent): Keeper runs it on a task "
            "branch and opens a Proposal.",
            "method": "POST",
            "href": f"/api/v1/domains/{domain.name}/operations/{operation}/execute",
            "permission": "proposal.create",
        }
    ]
    if reason == "protected-branch":
        steps.append(
            {
                "action": "create_branch",
                "detail": "Create a work branch from this one and execute the Operation there.",
                "method": "POST",
                "href": f"/api/v1/domains/{domain.name}/branches",
                "permission": "branch.create",
            }
        )
    return steps


def _why(operation: str, branch: str, reason: str) -> str:
    return (
        f"branch {branch!r} is protected: agent principals write to it through a Proposal"
        if reason == "protected-branch"
        else f"the review policy of {operation} holds for these parameters: the write needs a review"
    )


def review_note(domain: Domain, operation: str, branch: str, reason: str) -> dict[str, Any]:
    """What a dry run says of a write that will need review: it ran (a dry run changes nothing), and
    the real execution will be refused with 409 review-required unless it takes one of `next`."""
    return {
        "required": True,
        "reason": reason,
        "detail": _why(operation, branch, reason)
        + "; this dry run changed nothing, and executing it for real will need one of the next steps",
        "next": _next_for_review(domain, operation, reason),
    }


def review_required(domain: Domain, operation: str, branch: str, reason: str) -> Problem:
    why = _why(operation, branch, reason)
    return Problem(
        409,
        "review-required",
        why,
        branch=branch,
        operation=operation,
        reason=reason,
        proposals=[],
        next=_next_for_review(domain, operation, reason),
    )


def needs_review(p: Prepared, target: BranchRow | None) -> str | None:
    """Why a write on `target` needs a review (protected-branch, review-policy), or None."""
    if p.policy_review:
        return "review-policy"
    agent_types = p.domain.settings.model.keeper.agent_writes.principal_types
    if target is not None and target.protected and p.principal.type in agent_types:
        return "protected-branch"
    return None


__all__ = ["needs_review", "review_note", "review_required"]
