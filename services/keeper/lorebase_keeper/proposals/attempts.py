"""Merge attempts of a Proposal.

Every merge attempt is recorded: it runs the merge inside a savepoint, keeps it when the Proposal may
merge (approvals in, no open Conflict) and rolls it back otherwise, so `attempt.result` always says
what a merge would do (fast_forward, merge or conflicts) and Conflicts are found before anyone asks.
A Proposal is tried when it is opened (lifecycle.py) and again, in the background, whenever its
source or target head moves (checks.py); each attempt records the two heads it merged.

An attempt that is not kept and would commit the source's change sets on the target first (its
catch-up migrates the target's data) merges into a stand-in for the target (`_with_stand_in`), so the
target stays free. The merge that is kept (`merge_proposal`) stages the migration of the first change
set it brings ahead, before its transaction and outside every lock (schema_changes/catch_up.py
`staged_ahead`, the way a change set on a branch stages: change/apart.py): the target takes writes while
it runs, and under the locks the merge only migrates what was written meanwhile before it commits.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from lorebase.ids import new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.branches import fork_branch
from lorebase_keeper.domains import Domain
from lorebase_keeper.merge import (
    MergeRequest,
    MergeResult,
    change_sets_to_catch_up,
    merge,
    schema_changes_to_bring,
)
from lorebase_keeper.proposals.lifecycle import cleanup
from lorebase_keeper.proposals.state import (
    Approval,
    approval_of,
    blockers,
    find_proposal,
    proposal_document,
    require_open,
)
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.schema_changes import Ahead, ToStage, catch_up, staged_ahead, to_stage
from lorebase_store import AttemptRow, BranchRow, ProposalRow, Txn

# What a stand-in's name adds to its target's (`main~attempt`): `~` is in no branch's name (an archive
# has `~` and digits), so it meets neither a live branch nor an archive.
STAND_IN = "~attempt"


@dataclass
class Attempt:
    result: MergeResult
    attempt: AttemptRow
    performed: bool
    blockers: list[str]
    approval: Approval
    branch_deleted: bool


async def attempt_merge(
    txn: Txn,
    domain: Domain,
    proposal: ProposalRow,
    *,
    by: str,
    perform: bool,
    at: datetime,
    ahead: Ahead | None = None,
) -> Attempt:
    """Try the merge of an open Proposal (locked by the caller): kept when `perform` and nothing
    blocks it, rolled back otherwise; the attempt and any Conflicts found are recorded. `ahead`:
    the first change set it brings, staged before its transaction (merge_proposal)."""
    target = await txn.get_branch(domain.id, proposal.target_ref)
    source = await txn.get_branch(domain.id, proposal.source_ref)
    approval = await approval_of(txn, domain, proposal, target)
    request = await _request(txn, domain, proposal, by, at, ahead)
    savepoint = await txn.conn.begin_nested()
    if (not perform or blockers(proposal, approval, 0)) and source is not None and target is not None:
        request = await _with_stand_in(txn, domain, request, source, target)
    result = await merge(txn, request)
    blocked = blockers(proposal, approval, len(result.conflicts))
    performed = perform and not blocked and result.result != "conflicts" and request.into is None
    if performed:
        await savepoint.commit()
    else:
        await savepoint.rollback()
    fingerprints = [c.fingerprint for c in result.conflicts]
    await txn.drop_open_conflicts(proposal.id, fingerprints)
    if result.cleared_known:  # a value an earlier attempt cleared that this one keeps is listed no more
        await txn.drop_conflicts_of_code(
            proposal.id, "schema_cleared", [c.fingerprint for c in result.cleared]
        )
    await txn.add_conflicts(proposal.id, [c.row(new_id("cnf")) for c in result.conflicts], at)
    if result.cleared:  # said, not blocking: kept as resolved by the change set's on_invalid
        await txn.add_conflicts(
            proposal.id,
            [c.row(new_id("cnf")) for c in result.cleared],
            at,
            resolution={"choice": "theirs", "by": "on_invalid: clear"},
        )
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
        source_head=source.head if source is not None else None,
        target_head=target.head if target is not None else None,
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


async def _request(
    txn: Txn, domain: Domain, proposal: ProposalRow, by: str, at: datetime, ahead: Ahead | None
) -> MergeRequest:
    """The merge of the Proposal, with the resolutions of its Conflicts and its task's events."""
    stored = await txn.conflicts_of(proposal.id)
    resolutions = {c.fingerprint: c.resolution or {} for c in stored if c.status == "resolved"}
    # Each event remembers the Revision its execution committed on the task branch (add_task_events).
    events = [
        {**event, "revisions": [execution["revision"]] if execution.get("revision") else []}
        for execution in proposal.executions
        for event in execution.get("events", [])
    ]
    return MergeRequest(
        domain=domain,
        source=proposal.source_ref,
        target=proposal.target_ref,
        author=by,
        message=f"Merge {proposal.id}: {proposal.title}",
        proposal=proposal.id,
        at=at,
        resolutions=resolutions,
        events=events,
        catch_up=catch_up if ahead is None else functools.partial(catch_up, ahead=ahead),
    )


async def _with_stand_in(
    txn: Txn, domain: Domain, request: MergeRequest, source: BranchRow, target: BranchRow
) -> MergeRequest:
    """The request to merge into a stand-in for the target when the merge would commit the source's
    change sets on it first (a catch-up migrates the target's data: seconds to minutes over a large
    Kind) and the attempt is not kept: an overlay forked from the target's head (the same state,
    created for free), inside the attempt's savepoint, gone with it. The target stays unlocked
    meanwhile, so a Proposal carrying a schema change is checked again each time the target moves
    without stopping the target's writes; the merge that is kept runs on the target itself, its
    first change set staged ahead outside the locks (merge_proposal)."""
    if not await schema_changes_to_bring(txn, domain, source, target):
        return request
    stand_in = await fork_branch(
        txn, domain, target, f"{target.name}{STAND_IN}", mode="overlay", by=request.author, at=request.at
    )
    assert stand_in is not None  # a name no branch can have (`~`), made and dropped in this savepoint
    return replace(request, into=stand_in.name)


async def attempt_is_current(txn: Txn, domain: Domain, proposal: ProposalRow) -> bool:
    """Whether the latest attempt merged the heads the source and target have now."""
    latest = await txn.latest_attempt(proposal.id)
    if latest is None:
        return False
    source = await txn.get_branch(domain.id, proposal.source_ref)
    target = await txn.get_branch(domain.id, proposal.target_ref)
    heads = (source.head if source else None, target.head if target else None)
    return (latest.source_head, latest.target_head) == heads


async def merge_proposal(rt: Runtime, access: Access, domain: Domain, proposal_id: str) -> dict[str, Any]:
    at = utc_now()
    by = access.principal.id
    # A merge that will be kept and commits the source's change sets on the target first: the first
    # one's migration staged before its transaction, the target free meanwhile (catch_up.py).
    staging = await rt.db.read("merge_proposal_ahead", _to_stage, access, domain, proposal_id, by, at)

    async def txn_fn(txn: Txn, ahead: Ahead | None) -> dict[str, Any]:
        proposal = await find_proposal(txn, access, domain, proposal_id, lock=True)
        require_open(proposal, "merge")
        if ahead is not None:  # its commit writes a change set's rows: reads go first, as for one (change/)
            await txn.lower_priority(domain.settings.model.keeper.schema_changes.nice)
        outcome = await attempt_merge(txn, domain, proposal, by=by, perform=True, at=at, ahead=ahead)
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

    async with staged_ahead(rt, domain, staging) as ahead:
        document = await rt.db.run_interaction("merge_proposal", txn_fn, ahead)
    if document.get("status") == "merged":  # the target moved: its other Proposals are tried again
        rt.moves.moved(domain.id, document["target_ref"])
        rt.domains.forget(domain.name)  # it may stand on the source's schema version now
    return document


async def _to_stage(
    txn: Txn, access: Access, domain: Domain, proposal_id: str, by: str, at: datetime
) -> ToStage | None:
    """The first change set the merge of the Proposal would commit on its target first, when the
    merge is to be kept (approvals in, as attempt_merge judges them); None otherwise, or when it
    brings none (it fast-forwards, or the schemas conflict first)."""
    proposal = await find_proposal(txn, access, domain, proposal_id)
    target = await txn.get_branch(domain.id, proposal.target_ref)
    if proposal.status != "open" or target is None:
        return None
    if blockers(proposal, await approval_of(txn, domain, proposal, target), 0):
        return None
    steps = await change_sets_to_catch_up(txn, await _request(txn, domain, proposal, by, at, None))
    if not steps:
        return None
    return await to_stage(txn, domain, target, steps[0].revision, steps[0].items)


__all__ = ["Attempt", "attempt_is_current", "attempt_merge", "merge_proposal"]
