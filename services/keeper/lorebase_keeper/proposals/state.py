"""What a Proposal stands at: its approval (the reviews against what the target requires), what
blocks its merge, the calls that move it on, and the document every Proposal call answers.

A Proposal is visible to the readers of its target who may read every Kind it touches; to anyone
else it answers like an unknown one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.merge import schema_changes_to_bring
from lorebase_store import AttemptRow, BranchRow, ProposalRow, Txn


@dataclass(frozen=True)
class Approval:
    required: int
    approvals: int
    changes_requested: bool
    stale_for_schema: int = 0  # approvals given before the source gained a change set it brings

    @property
    def satisfied(self) -> bool:
        return self.approvals >= self.required

    def document(self) -> dict[str, Any]:
        document = {"required": self.required, "approvals": self.approvals, "satisfied": self.satisfied}
        if self.stale_for_schema:  # absent: 0
            document["stale_for_schema"] = self.stale_for_schema
        return document


def _href(domain: Domain, proposal_id: str, tail: str = "") -> str:
    return f"/api/v1/domains/{domain.name}/proposals/{proposal_id}{tail}"


async def approval_of(txn: Txn, domain: Domain, proposal: ProposalRow, target: BranchRow | None) -> Approval:
    """The reviews against what the target requires. When the Proposal changes the target's schema,
    an approval counts only when given after the source gained the last change set it brings
    (`schema_since`): one given before approved other changes (and, then, needed no schema
    approver)."""
    required = target.required_approvals if target is not None and target.protected else 0
    if proposal.review_policy:
        required = max(required, 1)
    latest: dict[str, tuple[str, datetime]] = {}
    for review in await txn.reviews(proposal.id):
        if review.reviewer != proposal.author:
            latest[review.reviewer] = (review.decision, review.created_at)
    approved = [at for decision, at in latest.values() if decision == "approve"]
    # Without an approval there is nothing to judge (a listing of Proposals reads no merge base).
    since = await schema_since(txn, domain, proposal, target) if approved else None
    counted = [at for at in approved if since is None or (since is not _UNKNOWN and at >= since)]
    changes_requested = any(decision == "request_changes" for decision, _ in latest.values())
    return Approval(required, len(counted), changes_requested, len(approved) - len(counted))


_UNKNOWN = datetime.max  # a change set whose arrival on the source is not known: no approval counts


async def schema_since(
    txn: Txn, domain: Domain, proposal: ProposalRow, target: BranchRow | None
) -> datetime | None:
    """When the source gained the last of the change sets merging would bring to the target (None:
    it brings none). A change set committed on the source arrived when it was made; one made on
    another branch, when the source was created from it or when the Proposal that brought it into
    the source merged (_UNKNOWN when neither says)."""
    source = await txn.get_branch(domain.id, proposal.source_ref)
    if source is None or target is None or proposal.status != "open":
        return None
    brought = await schema_changes_to_bring(txn, domain, source, target)
    if not brought:
        return None
    gained: list[datetime] = []
    for revision in brought:
        if revision.branch == source.name:
            gained.append(revision.created_at)
        elif revision.created_at <= source.created_at:
            gained.append(source.created_at)
        else:
            found = await txn.proposals_bringing(
                domain.id, source.name, [(revision.id, revision.branch, revision.created_at)]
            )
            merged = found[revision.id].merged_at if revision.id in found else None
            gained.append(merged if merged is not None else _UNKNOWN)
    return max(gained)


def blockers(proposal: ProposalRow, approval: Approval, open_conflicts: int) -> list[str]:
    found = []
    if approval.approvals < approval.required:
        found.append("approvals-pending")
    if proposal.review_policy and approval.approvals == 0:
        found.append("review-policy-needs-approval")
    if approval.changes_requested:
        found.append("changes-requested")
    if open_conflicts:
        found.append("open-conflicts")
    return found


def next_steps(
    domain: Domain, proposal: ProposalRow, approval: Approval, blocked: list[str]
) -> list[dict[str, Any]]:
    if proposal.status != "open":
        return []
    steps = []
    if "approvals-pending" in blocked or "review-policy-needs-approval" in blocked:
        stale = (
            f" {approval.stale_for_schema} approval(s) given before the source gained a schema change "
            "set no longer count: request a new approval from a schema approver (schema.change on "
            "the target)."
            if approval.stale_for_schema
            else ""
        )
        steps.append(
            {
                "action": "await_review",
                "detail": f"Waiting for approval ({approval.approvals} of {max(approval.required, 1)} required).{stale}",
                "method": "POST",
                "href": _href(domain, proposal.id, "/reviews"),
                "permission": "proposal.review",
            }
        )
    if "open-conflicts" in blocked:
        steps.append(
            {
                "action": "resolve_conflicts",
                "detail": "Resolve the open Conflicts with the target (ours, theirs or a value).",
                "method": "GET",
                "href": _href(domain, proposal.id, "/conflicts"),
                "permission": "proposal.create",
            }
        )
    if not blocked:
        steps.append(
            {
                "action": "merge",
                "detail": "Merge the Proposal into its target.",
                "method": "POST",
                "href": _href(domain, proposal.id, "/merge"),
                "permission": "proposal.merge",
            }
        )
    steps.append(
        {
            "action": "get_proposal",
            "detail": "Read the state of the Proposal.",
            "method": "GET",
            "href": _href(domain, proposal.id),
        }
    )
    return steps


def attempt_document(attempt: AttemptRow | None) -> dict[str, Any] | None:
    if attempt is None:
        return None
    return {
        "id": attempt.id,
        "result": attempt.result,
        "open_conflicts": attempt.open_conflicts,
        "resolved_conflicts": attempt.resolved_conflicts,
        "counts": attempt.counts,
        "revision": attempt.revision,
        "source_head": attempt.source_head,
        "target_head": attempt.target_head,
        "at": iso(attempt.created_at),
    }


def proposal_summary(domain: Domain, proposal: ProposalRow, created: bool) -> dict[str, Any]:
    """The Proposal a write opened or joined, as a task write's answer names it."""
    return {
        "id": proposal.id,
        "title": proposal.title,
        "status": proposal.status,
        "source_ref": proposal.source_ref,
        "target_ref": proposal.target_ref,
        "url": _href(domain, proposal.id),
        "created": created,
    }


async def proposal_document(txn: Txn, domain: Domain, proposal: ProposalRow) -> dict[str, Any]:
    target = await txn.get_branch(domain.id, proposal.target_ref)
    approval = await approval_of(txn, domain, proposal, target)
    conflicts = await txn.conflicts_of(proposal.id)
    open_conflicts = sum(1 for c in conflicts if c.status == "open")
    blocked = blockers(proposal, approval, open_conflicts) if proposal.status == "open" else []
    reviews = await txn.reviews(proposal.id)
    stewards = sorted(
        {
            s
            for kind in proposal.kinds
            if kind in domain.schema.kinds
            for s in domain.schema.kinds[kind].stewards
        }
    )
    return {
        "id": proposal.id,
        "domain": domain.name,
        "title": proposal.title,
        "description": proposal.description,
        "status": proposal.status,
        "author": proposal.author,
        "source_ref": proposal.source_ref,
        "target_ref": proposal.target_ref,
        "task": proposal.task,
        "intent": proposal.intent,
        "kinds": proposal.kinds,
        "stewards": stewards,
        "executions": [
            {k: e.get(k) for k in ("invocation_id", "operation", "revision", "principal", "at")}
            for e in proposal.executions
        ],
        "approval": approval.document(),
        "reviews": [
            {"reviewer": r.reviewer, "decision": r.decision, "comment": r.comment, "at": iso(r.created_at)}
            for r in reviews
        ],
        "conflicts": {"open": open_conflicts, "resolved": len(conflicts) - open_conflicts},
        "attempt": attempt_document(await txn.latest_attempt(proposal.id)),
        "merge": {"mergeable": proposal.status == "open" and not blocked, "blockers": blocked},
        "merged_revision": proposal.merged_revision,
        "merged_by": proposal.merged_by,
        "merged_at": iso(proposal.merged_at) if proposal.merged_at else None,
        "closed_by": proposal.closed_by,
        "closed_at": iso(proposal.closed_at) if proposal.closed_at else None,
        "created_at": iso(proposal.created_at),
        "updated_at": iso(proposal.updated_at),
        "url": _href(domain, proposal.id),
        "next": next_steps(domain, proposal, approval, blocked),
    }


def visible(access: Access, domain: Domain, proposal: ProposalRow) -> bool:
    """Readers of the target who may read every Kind the Proposal touches (a lens is not a grant)."""
    if not access.can("data.read", proposal.target_ref):
        return False
    readable = set(readable_view(access, domain, proposal.target_ref).kinds)
    return all(kind in readable for kind in proposal.kinds if kind in domain.schema.kinds)


def proposal_not_found(proposal_id: str) -> Problem:
    return Problem(404, "not-found", f"unknown Proposal {proposal_id!r}; GET /proposals lists them")


async def find_proposal(
    txn: Txn, access: Access, domain: Domain, proposal_id: str, *, lock: bool = False
) -> ProposalRow:
    row = await txn.get_proposal(domain.id, proposal_id, for_update=lock)
    if row is None or not visible(access, domain, row):
        raise proposal_not_found(proposal_id)
    return row


def require_open(proposal: ProposalRow, what: str) -> None:
    if proposal.status != "open":
        raise Problem(
            409,
            "proposal-not-open",
            f"Proposal {proposal.id} is {proposal.status}; only an open Proposal can {what}",
            proposal=proposal.id,
            proposal_status=proposal.status,
        )


__all__ = [
    "Approval",
    "approval_of",
    "attempt_document",
    "blockers",
    "find_proposal",
    "proposal_not_found",
    "next_steps",
    "proposal_document",
    "require_open",
    "visible",
]
