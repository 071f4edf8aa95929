"""Proposals (docs/branches.md): a request to merge a source branch into a target, reviewed, then
merged or closed; every merge attempt recorded with the Conflicts it found, which are resolved
here (ours, theirs or a value) for the next attempt to apply."""

from lorebase_keeper.proposals.attempts import Attempt, attempt_is_current, attempt_merge, merge_proposal
from lorebase_keeper.proposals.checks import CHECKER, ProposalChecks, recheck_open
from lorebase_keeper.proposals.conflicts import conflict_document, list_conflicts, resolve_conflict
from lorebase_keeper.proposals.lifecycle import (
    cleanup,
    close_proposal,
    create_proposal,
    get_proposal,
    list_proposals,
    open_proposal,
    review_proposal,
)
from lorebase_keeper.proposals.state import (
    Approval,
    approval_of,
    attempt_document,
    blockers,
    find_proposal,
    next_steps,
    proposal_document,
    proposal_not_found,
    proposal_summary,
    require_open,
    visible,
)

__all__ = [
    "CHECKER",
    "Approval",
    "Attempt",
    "ProposalChecks",
    "recheck_open",
    "attempt_is_current",
    "approval_of",
    "attempt_document",
    "attempt_merge",
    "blockers",
    "cleanup",
    "close_proposal",
    "conflict_document",
    "create_proposal",
    "find_proposal",
    "get_proposal",
    "list_conflicts",
    "list_proposals",
    "merge_proposal",
    "next_steps",
    "proposal_summary",
    "open_proposal",
    "proposal_document",
    "proposal_not_found",
    "require_open",
    "resolve_conflict",
    "review_proposal",
    "visible",
]
