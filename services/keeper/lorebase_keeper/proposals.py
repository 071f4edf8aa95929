"""Proposals: a request to merge a source branch into a target, reviewed, then merged or closed.

Every merge attempt is recorded: it runs the merge inside a savepoint, keeps it when the Proposal may
merge (approvals in, no open Conflict) and rolls it back otherwise, so `attempt.result` always says
what a merge would do (fast_forward, merge or conflicts) and Conflicts are found before anyone asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.branches import remove_branch
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.merge import MergeRequest, MergeResult, merge, touched_kinds
from lorebase_keeper.runtime import Runtime
from lorebase_store import AttemptRow, BranchRow, ProposalRow, Txn

CREATE_MEMBERS = {"source", "target", "title", "description"}
DECISIONS = ("approve", "request_changes")
MAX_TITLE = 200
MAX_DESCRIPTION = 20000


@dataclass(frozen=True)
class Approval:
    required: int
    approvals: int
    changes_requested: bool

    @property
    def satisfied(self) -> bool:
        return self.approvals >= self.required

    def document(self) -> dict[str, Any]:
        return {"required": self.required, "approvals": self.approvals, "satisfied": self.satisfied}


def _href(domain: Domain, proposal_id: str, tail: str = "") -> str:
    return f"/api/v1/domains/{domain.name}/proposals/{proposal_id}{tail}"


async def approval_of(txn: Txn, proposal: ProposalRow, target: BranchRow | None) -> Approval:
    required = target.required_approvals if target is not None and target.protected else 0
    if proposal.review_policy:
        required = max(required, 1)
    latest: dict[str, str] = {}
    for review in await txn.reviews(proposal.id):
        if review.reviewer != proposal.author:
            latest[review.reviewer] = review.decision
    approvals = sum(1 for d in latest.values() if d == "approve")
    return Approval(required, approvals, any(d == "request_changes" for d in latest.values()))


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
        steps.append(
            {
                "action": "await_review",
                "detail": f"Waiting for approval ({approval.approvals} of {max(approval.required, 1)} required).",
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
        "at": iso(attempt.created_at),
    }


async def proposal_document(txn: Txn, domain: Domain, proposal: ProposalRow) -> dict[str, Any]:
    target = await txn.get_branch(domain.id, proposal.target_ref)
    approval = await approval_of(txn, proposal, target)
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


def _visible(access: Access, domain: Domain, proposal: ProposalRow) -> bool:
    """Readers of the target who may read every Kind the Proposal touches (a lens is not a grant)."""
    if not access.can("data.read", proposal.target_ref):
        return False
    readable = set(readable_view(access, domain, proposal.target_ref).kinds)
    return all(kind in readable for kind in proposal.kinds if kind in domain.schema.kinds)


async def find_proposal(
    txn: Txn, access: Access, domain: Domain, proposal_id: str, *, lock: bool = False
) -> ProposalRow:
    row = await txn.get_proposal(domain.id, proposal_id, for_update=lock)
    if row is None or not _visible(access, domain, row):
        raise Problem(404, "not-found", f"unknown Proposal {proposal_id!r}; GET /proposals lists them")
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


def _text(body: dict[str, Any], member: str, limit: int, *, required: bool = False) -> str | None:
    value = body.get(member)
    if value is None:
        if required:
            raise Problem(422, "validation-failed", f"{member} is required (a string)")
        return None
    if not isinstance(value, str) or len(value) > limit or (required and not value.strip()):
        raise Problem(
            422,
            "validation-failed",
            f"{member} must be a non-empty string of at most {limit} characters",
            issues=[{"path": member, "rule": "type", "message": f"a string of at most {limit} characters"}],
        )
    return value


async def open_proposal(
    txn: Txn,
    domain: Domain,
    *,
    source: BranchRow,
    target: str,
    title: str,
    description: str,
    author: str,
    at: datetime,
    task: str | None = None,
    intent: str | None = None,
    review_policy: bool = False,
    executions: list[dict[str, Any]] | None = None,
) -> ProposalRow | None:
    """Open a Proposal (None: one is open for this source and target already)."""
    target_row = await txn.get_branch(domain.id, target)
    if target_row is None:
        raise Problem(404, "not-found", f"unknown target branch {target!r}")
    proposal_id = new_id("prp")
    created = await txn.insert_proposal(
        id=proposal_id,
        domain_id=domain.id,
        source_ref=source.name,
        target_ref=target,
        title=title,
        description=description,
        intent=intent,
        task=task,
        author=author,
        review_policy=review_policy,
        executions=executions or [],
        kinds=await touched_kinds(txn, domain, source, target_row),
        at=at,
    )
    if not created:
        return None
    await txn.audit(
        author,
        "proposal.create",
        at,
        domain=domain.name,
        target=proposal_id,
        details={"source": source.name, "target": target},
    )
    return await txn.get_proposal(domain.id, proposal_id)


async def create_proposal(
    rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]
) -> dict[str, Any]:
    unknown = sorted(set(body) - CREATE_MEMBERS)
    if unknown:
        raise Problem(
            422,
            "validation-failed",
            f"unknown member(s) {', '.join(unknown)}; a Proposal takes {', '.join(sorted(CREATE_MEMBERS))}",
        )
    if not isinstance(body.get("source"), str):
        raise Problem(422, "validation-failed", "source is required: the branch to merge")
    source = check_branch_name(body["source"], member="source")
    target = check_branch_name(body.get("target") or domain.default_branch, member="target")
    if source == target:
        raise Problem(422, "validation-failed", "source and target are the same branch; name two branches")
    title = _text(body, "title", MAX_TITLE, required=True) or ""
    description = _text(body, "description", MAX_DESCRIPTION) or ""
    access.require("proposal.create", source)
    access.require("data.read", target)
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        row = await txn.get_branch(domain.id, source)
        if row is None:
            raise Problem(404, "not-found", f"unknown source branch {source!r}")
        proposal = await open_proposal(
            txn,
            domain,
            source=row,
            target=target,
            title=title,
            description=description,
            author=access.principal.id,
            at=at,
        )
        if proposal is None:
            existing = await txn.open_proposal(domain.id, source, target)
            raise Problem(
                409,
                "already-exists",
                f"a Proposal from {source!r} into {target!r} is open already",
                proposal=existing.id if existing else None,
            )
        return await proposal_document(txn, domain, proposal)

    return await rt.db.run_interaction("create_proposal", txn_fn)


async def list_proposals(
    rt: Runtime, access: Access, domain: Domain, *, status: str, assigned: str, limit: int, cursor: str
) -> dict[str, Any]:
    if status not in ("", "open", "merged", "closed", "all"):
        raise Problem(400, "invalid-parameter", f"status is open, merged, closed or all, not {status!r}")
    if assigned not in ("", "me"):
        raise Problem(400, "invalid-parameter", f"assigned takes me, not {assigned!r}")
    if limit < 0 or limit > 200:
        raise Problem(400, "invalid-parameter", "limit is 1 to 200")
    limit = limit or 50
    wanted = None if status == "all" else (status or "open")

    async def read(txn: Txn) -> dict[str, Any]:
        found: list[dict[str, Any]] = []
        after = cursor or None
        more = False
        while len(found) < limit:
            rows = await txn.list_proposals(domain.id, status=wanted, after=after, limit=limit * 2)
            for row in rows:
                after = row.id
                if not _visible(access, domain, row):
                    continue
                if assigned == "me":
                    stewards = {
                        s
                        for k in row.kinds
                        if k in domain.schema.kinds
                        for s in domain.schema.kinds[k].stewards
                    }
                    if access.principal.id not in stewards:
                        continue
                if len(found) == limit:
                    more = True
                    break
                found.append(await proposal_document(txn, domain, row))
            if more or len(rows) < limit * 2:
                break
        return {
            "domain": domain.name,
            "proposals": found,
            "next_cursor": found[-1]["id"] if more and found else None,
        }

    return await rt.db.read("list_proposals", read)


async def get_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        return await proposal_document(txn, domain, await find_proposal(txn, access, domain, proposal_id))

    return await rt.db.read("get_proposal", read)


async def review_proposal(
    rt: Runtime, access: Access, domain: Domain, proposal_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    unknown = sorted(set(body) - {"decision", "comment"})
    decision = body.get("decision")
    if unknown or decision not in DECISIONS:
        raise Problem(
            422,
            "validation-failed",
            'a review is {"decision": "approve" | "request_changes", "comment": text}',
            issues=[{"path": "decision", "rule": "enum", "message": "approve or request_changes"}],
        )
    comment = _text(body, "comment", MAX_DESCRIPTION)
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        access.require("proposal.review", proposal.target_ref)
        require_open(proposal, "be reviewed")
        if decision == "approve" and proposal.author == access.principal.id:
            raise Problem(
                403, "own-proposal", "an author cannot approve their own Proposal; ask another reviewer"
            )
        await txn.add_review(proposal.id, access.principal.id, str(decision), comment, at)
        await txn.update_proposal(proposal.id, updated_at=at)
        await txn.audit(
            access.principal.id,
            "proposal.review",
            at,
            domain=domain.name,
            target=proposal.id,
            details={"decision": decision},
        )
        row = await txn.get_proposal(domain.id, proposal.id)
        assert row is not None
        return await proposal_document(txn, domain, row)

    return await rt.db.run_interaction("review_proposal", txn_fn)


@dataclass
class Attempt:
    result: MergeResult
    attempt: AttemptRow
    performed: bool
    blockers: list[str]
    approval: Approval
    branch_deleted: bool


async def attempt_merge(
    txn: Txn, domain: Domain, proposal: ProposalRow, *, by: str, perform: bool, at: datetime
) -> Attempt:
    """Try the merge of an open Proposal (locked by the caller): kept when `perform` and nothing
    blocks it, rolled back otherwise; the attempt and any Conflicts found are recorded."""
    target = await txn.get_branch(domain.id, proposal.target_ref)
    approval = await approval_of(txn, proposal, target)
    stored = await txn.conflicts_of(proposal.id)
    resolutions = {c.fingerprint: c.resolution or {} for c in stored if c.status == "resolved"}
    events = [event for execution in proposal.executions for event in execution.get("events", [])]
    request = MergeRequest(
        domain=domain,
        source=proposal.source_ref,
        target=proposal.target_ref,
        author=by,
        message=f"Merge {proposal.id}: {proposal.title}",
        proposal=proposal.id,
        at=at,
        resolutions=resolutions,
        events=events,
    )
    savepoint = await txn.conn.begin_nested()
    result = await merge(txn, request)
    blocked = blockers(proposal, approval, len(result.conflicts))
    performed = perform and not blocked and result.result != "conflicts"
    if performed:
        await savepoint.commit()
    else:
        await savepoint.rollback()
    fingerprints = [c.fingerprint for c in result.conflicts]
    await txn.drop_open_conflicts(proposal.id, fingerprints)
    await txn.add_conflicts(proposal.id, [c.row(new_id("cnf")) for c in result.conflicts], at)
    counts: dict[str, int] = {}
    for conflict in result.conflicts:
        counts[conflict.code] = counts.get(conflict.code, 0) + 1
    attempt = AttemptRow(
        id=new_id("mat"),
        result=result.result,
        counts=counts,
        open_conflicts=len(result.conflicts),
        resolved_conflicts=result.resolved,
        revision=result.head if performed else None,
        by=by,
        created_at=at,
    )
    await txn.insert_attempt(proposal.id, attempt)
    deleted = False
    if performed:
        await txn.update_proposal(
            proposal.id,
            status="merged",
            merged_revision=result.head,
            merged_by=by,
            merged_at=at,
            updated_at=at,
        )
        await txn.audit(
            by,
            "proposal.merge",
            at,
            domain=domain.name,
            target=proposal.id,
            details={"revision": result.head, "result": result.result},
        )
        deleted = await cleanup(txn, domain, proposal, by, at)
    return Attempt(result, attempt, performed, blocked, approval, deleted)


async def cleanup(txn: Txn, domain: Domain, proposal: ProposalRow, by: str, at: datetime) -> bool:
    """Delete a task branch whose Proposal merged or closed, unless another open Proposal uses it."""
    if proposal.task is None or not domain.settings.get("keeper.agent_writes.delete_branch_on_merge", True):
        return False
    others = [p for p in await txn.proposals_from(domain.id, proposal.source_ref) if p.id != proposal.id]
    if others or await txn.get_branch(domain.id, proposal.source_ref) is None:
        return False
    await remove_branch(txn, domain, proposal.source_ref, by, at)
    return True


async def merge_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        access.require("proposal.merge", proposal.target_ref)
        require_open(proposal, "merge")
        outcome = await attempt_merge(txn, domain, proposal, by=access.principal.id, perform=True, at=at)
        if outcome.blockers and outcome.result.result != "conflicts":
            raise Problem(
                409,
                "merge-blocked",
                f"Proposal {proposal.id} cannot merge yet: {', '.join(outcome.blockers)}",
                proposal=proposal.id,
                blockers=outcome.blockers,
                approval=outcome.approval.document(),
            )
        row = await txn.get_proposal(domain.id, proposal.id)
        assert row is not None
        document = await proposal_document(txn, domain, row)
        document["branch_deleted"] = outcome.branch_deleted
        return document

    return await rt.db.run_interaction("merge_proposal", txn_fn)


async def close_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        if proposal.author != access.principal.id:
            access.require("proposal.merge", proposal.target_ref)
        require_open(proposal, "be closed")
        await txn.update_proposal(
            proposal.id, status="closed", closed_by=access.principal.id, closed_at=at, updated_at=at
        )
        await txn.audit(
            access.principal.id, "proposal.close", at, domain=domain.name, target=proposal.id, details={}
        )
        deleted = await cleanup(txn, domain, proposal, access.principal.id, at)
        row = await txn.get_proposal(domain.id, proposal.id)
        assert row is not None
        document = await proposal_document(txn, domain, row)
        document["branch_deleted"] = deleted
        return document

    return await rt.db.run_interaction("close_proposal", txn_fn)


__all__ = [
    "find_proposal",
    "require_open",
    "Approval",
    "attempt_merge",
    "close_proposal",
    "create_proposal",
    "get_proposal",
    "list_proposals",
    "merge_proposal",
    "open_proposal",
    "proposal_document",
    "review_proposal",
]
