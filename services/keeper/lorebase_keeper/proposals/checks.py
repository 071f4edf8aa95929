"""Open Proposals tried again when their source or target head moves, off the request path.

A Proposal's `mergeable`, blockers and Conflicts are those of its latest merge attempt. It is tried
when opened (in the opening transaction: the answer of POST /proposals already says whether it
merges), and afterwards whenever a commit or a merge moves its source or its target: the Committer
and the merges report the branch (writes/moves.py), and this listener, in keeper's background task,
tries each open Proposal on that branch whose latest attempt merged other heads, one transaction
each, with the Proposal's row locked, never keeping the merge (`perform=False`). Moves coalesce, so
a busy branch costs one attempt per Proposal per round, not one per commit. The attempts are
recorded as made by `CHECKER`. A keeper that stops between a commit and its check would leave the
attempt out of date, so a keeper that starts reports every open Proposal's source as moved
(`recheck_open`): attempts that are still current cost one read each. Until a check has run,
`attempt.source_head` and `attempt.target_head` say which heads an attempt merged, so a client can
tell.
"""

from __future__ import annotations

from lorebase.ids import utc_now
from lorebase.problems import Problem
from lorebase_keeper.domains import Domain
from lorebase_keeper.proposals.attempts import attempt_is_current, attempt_merge
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

CHECKER = "keeper"  # the `by` of the attempts made here


class ProposalChecks:
    """The listener of `rt.moves` that keeps open Proposals' attempts current."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    async def __call__(self, domain_id: int, branch: str) -> None:
        # Most branches have no open Proposal: one statement outside a transaction, and nothing more.
        if not await self.rt.db.read_one(
            "any_open_proposal_on", lambda txn: txn.any_open_proposal_on(domain_id, branch)
        ):
            return
        proposals = await self.rt.db.read(
            "open_proposals_on", lambda txn: txn.open_proposals_on(domain_id, branch)
        )
        if not proposals:
            return
        name = await self.rt.db.read("domain_name", lambda txn: txn.domain_name(domain_id))
        if name is None:
            return
        try:
            domain = await self.rt.domains.get(name)
        except Problem:
            return
        for proposal in proposals:
            await self.rt.db.run_interaction("check_proposal", _check, domain, proposal.id)


async def recheck_open(rt: Runtime) -> int:
    """Report the source branch of every open Proposal as moved, so that `ProposalChecks` brings
    each attempt up to date in the background; answers how many branches were reported."""
    branches = await rt.db.read("open_proposal_sources", lambda txn: txn.open_proposal_sources())
    for domain_id, branch in branches:
        rt.moves.moved(domain_id, branch)
    return len(branches)


async def _check(txn: Txn, domain: Domain, proposal_id: str) -> None:
    proposal = await txn.get_proposal(domain.id, proposal_id, for_update=True)
    if proposal is None or proposal.status != "open" or await attempt_is_current(txn, domain, proposal):
        return
    await attempt_merge(txn, domain, proposal, by=CHECKER, perform=False, at=utc_now())


__all__ = ["CHECKER", "ProposalChecks", "recheck_open"]
