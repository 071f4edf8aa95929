"""Proposals: a request to merge a source branch into a target, opened, listed, reviewed, and merged
(attempts.py) or closed. A task branch whose Proposal merged or closed is deleted, unless another
open Proposal uses it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lorebase.contract.policy import P
from lorebase.contract.proposals import NewProposal, Review
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.ids import new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.branches import remove_branch
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.merge import schema_changes_to_bring, touched_kinds
from lorebase_keeper.proposals.state import find_proposal, proposal_document, require_open, visible
from lorebase_keeper.runtime import Runtime
from lorebase_store import BranchRow, ProposalRow, Txn


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


async def create_proposal(rt: Runtime, access: Access, domain: Domain, new: NewProposal) -> dict[str, Any]:
    """POST /proposals: propose to merge `source` into `target` (default: the default branch)."""
    source = check_branch_name(new.source, member="source")
    target = check_branch_name(new.target or domain.default_branch, member="target")
    if source == target:
        raise Problem(422, "validation-failed", "source and target are the same branch; name two branches")
    if not new.title.strip():
        raise Problem(
            422,
            "validation-failed",
            "title must not be blank: say what the Proposal changes",
            issues=[{"path": "title", "rule": "required", "message": "a title that is not only spaces"}],
        )
    # attempts.py builds on this module (cleanup), so its merge attempt is imported here.
    from lorebase_keeper.proposals.attempts import attempt_merge

    title, description = new.title, new.description or ""
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
        if not visible(access, domain, proposal):  # nothing is kept: the transaction rolls back
            raise Problem(
                403,
                "forbidden",
                f"the changes of {source!r} reach Kinds {access.principal.id} may not read; a Proposal "
                "shows every change it merges, so it needs a grant that reads them",
                permission="data.read",
                branch=target,
            )
        # Tried at once, so the answer says whether it merges and what conflicts (checks.py keeps
        # it current as the heads move).
        await attempt_merge(txn, domain, proposal, by=access.principal.id, perform=False, at=at)
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
    start = decode_cursor(cursor, lambda v: isinstance(v, str) and 0 < len(v) <= 64) if cursor else None

    async def read(txn: Txn) -> dict[str, Any]:
        found: list[dict[str, Any]] = []
        after = start
        more = False
        while len(found) < limit:
            rows = await txn.list_proposals(domain.id, status=wanted, after=after, limit=limit * 2)
            for row in rows:
                after = row.id
                if not visible(access, domain, row):
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
            "next_cursor": encode_cursor(found[-1]["id"]) if more and found else None,
        }

    return await rt.db.read("list_proposals", read)


async def get_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        return await proposal_document(txn, domain, await find_proposal(txn, access, domain, proposal_id))

    return await rt.db.read("get_proposal", read)


async def review_proposal(
    rt: Runtime, access: Access, domain: Domain, proposal_id: str, review: Review
) -> dict[str, Any]:
    """POST /proposals/{id}/reviews: approve or request changes (not on one's own Proposal)."""
    decision, comment = review.decision, review.comment
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        require_open(proposal, "be reviewed")
        if decision == "approve" and proposal.author == access.principal.id:
            raise Problem(
                403, "own-proposal", "an author cannot approve their own Proposal; ask another reviewer"
            )
        if decision == "approve" and P.SCHEMA_CHANGE not in access.permissions(proposal.target_ref):
            await _require_no_schema_change(txn, domain, proposal)
        await txn.add_review(proposal.id, access.principal.id, decision, comment, at)
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


async def _require_no_schema_change(txn: Txn, domain: Domain, proposal: ProposalRow) -> None:
    """403 when merging the Proposal would change the target's schema: only a principal who may
    change that schema (`schema.change` on the target) approves such a Proposal."""
    source = await txn.get_branch(domain.id, proposal.source_ref)
    target = await txn.get_branch(domain.id, proposal.target_ref)
    if source is None or target is None:
        return
    brought = await schema_changes_to_bring(txn, domain, source, target)
    if brought:
        raise Problem(
            403,
            "schema-approval-required",
            f"this Proposal changes the schema of {proposal.target_ref!r} (the change sets of "
            f"{', '.join(r.id[:12] for r in brought[:5])}): approving it needs the schema.change "
            f"permission on {proposal.target_ref!r}; ask a principal who holds it, or request changes",
            permission=P.SCHEMA_CHANGE,
        )


async def cleanup(txn: Txn, domain: Domain, proposal: ProposalRow, by: str, at: datetime) -> bool:
    """Delete a task branch whose Proposal merged or closed, unless another open Proposal uses it."""
    if proposal.task is None or not domain.settings.model.keeper.agent_writes.delete_branch_on_merge:
        return False
    others = [p for p in await txn.proposals_from(domain.id, proposal.source_ref) if p.id != proposal.id]
    if others or await txn.get_branch(domain.id, proposal.source_ref) is None:
        return False
    await remove_branch(txn, domain, proposal.source_ref, by, at)
    return True


async def close_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    at = utc_now()

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
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
    "cleanup",
    "close_proposal",
    "create_proposal",
    "get_proposal",
    "list_proposals",
    "open_proposal",
    "review_proposal",
]
