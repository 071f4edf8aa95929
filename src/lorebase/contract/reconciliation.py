"""Reconciliation: candidate pairs of Records likely to be the same thing (docs/reconciliation.md),
listed, read, accepted (the Records merged by one Revision, or a Proposal on a protected branch),
dismissed, or computed now."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase.contract import answers
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import Cursor, DomainName, Name, OptionalName, ShortText, bounded
from lorebase.contract.policy import Need, Owner, P, Scope, Target, grant

CANDIDATE = DOMAIN + "/reconciliation/{id}"
Reason = Annotated[str, bounded(2000, "Why it was decided so (kept in the candidate and the audit log)")]


class ListReconciliation(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    status: Annotated[Literal["", "open", "accepted", "dismissed", "all"], Query] = ""
    kind: Annotated[OptionalName, Query] = ""
    assigned: Annotated[Literal["", "me"], Query] = ""
    limit: Annotated[
        Annotated[int, Meta(ge=1, le=200, description="Page size (left out: 50)")] | None, Query
    ] = None
    cursor: Annotated[Cursor, Query] = ""


class CandidateCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]


class Accept(Body, frozen=True, kw_only=True):
    keep: Annotated[str, bounded(512, "The key of the Record that survives", min_length=1)]
    reason: Reason | None = None
    task: ShortText | None = None


class AcceptCandidate(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]
    body: Accept


class Dismiss(Body, frozen=True, kw_only=True):
    reason: Annotated[str, bounded(2000, "Why the two Records are not the same thing", min_length=1)]


class DismissCandidate(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]
    body: Dismiss


class ScanReconciliation(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]


ENDPOINTS = [
    Endpoint(
        "list_reconciliation",
        "GET",
        DOMAIN + "/reconciliation",
        "keeper",
        "ListReconciliation",
        ListReconciliation,
        "Reconciliation candidates: pairs of Records likely to be the same thing; assigned=me: "
        "those of the Kinds the caller stewards",
        "governance",
        policy=grant(Need(P.DATA_READ, "default"), scope=Scope.KIND, kind="kind"),
        description="Open candidates by default (`status`: accepted, dismissed or all); `kind` narrows "
        "to one Kind. Each has its evidence (the rules that matched and the values compared, masked "
        "where the caller lacks the clearance) and the stewards of its Kind. Candidates of Kinds the "
        "caller may not read are left out.",
        response=answers.governance.CandidateList,
    ),
    Endpoint(
        "get_reconciliation",
        "GET",
        CANDIDATE,
        "keeper",
        "GetReconciliation",
        CandidateCall,
        "A reconciliation candidate, with the two Records as the caller may read them now",
        "governance",
        policy=grant(Need(P.DATA_READ, "candidate"), scope=Scope.TARGET, target=Target.CANDIDATE),
        response=answers.governance.CandidateDoc,
    ),
    Endpoint(
        "accept_reconciliation",
        "POST",
        CANDIDATE + "/accept",
        "keeper",
        "AcceptReconciliation",
        AcceptCandidate,
        "Merge the two Records: `keep` survives, takes the other's values where it has none and its "
        "Links, and the other is deleted (merged_into); a Proposal on a protected branch",
        "governance",
        policy=grant(Need(P.OPERATION_EXECUTE, "candidate"), scope=Scope.TARGET, target=Target.MERGE),
        description="One Revision on the candidate's branch keeps `keep`, fills its empty Attributes "
        "from the other Record (where both hold a value the survivor's wins; `conflicts` lists them), "
        "moves every Link of the other Record to the survivor (dropping a Link the survivor already "
        "has or a single-valued Relation would refuse: `dropped_links`), and deletes the other Record, "
        "whose history says `merged_into`. An agent on a protected branch gets a task branch and a "
        "Proposal instead (202, with `next`). 409 `candidate-stale` when a Record was deleted or "
        "changed so the rule no longer holds; 409 `candidate-decided` once decided.",
        problems=(409,),
        response=answers.governance.CandidateAccepted,
        other_answers=((202, answers.governance.CandidateAccepted),),
    ),
    Endpoint(
        "dismiss_reconciliation",
        "POST",
        CANDIDATE + "/dismiss",
        "keeper",
        "DismissReconciliation",
        DismissCandidate,
        "Dismiss a candidate: the pair is never proposed again",
        "governance",
        policy=grant(
            Need(P.PROPOSAL_REVIEW, "candidate"),
            scope=Scope.TARGET,
            target=Target.CANDIDATE,
            owner=Owner.STEWARD,
        ),
        problems=(409,),
        response=answers.governance.CandidateDecided,
    ),
    Endpoint(
        "scan_reconciliation",
        "POST",
        DOMAIN + "/reconciliation/scan",
        "keeper",
        "ScanReconciliation",
        ScanReconciliation,
        "Compute the candidates of the default branch now (Scribe does it on its own schedule)",
        "governance",
        policy=grant(Need(P.PROPOSAL_REVIEW, "default"), scope=Scope.EVERY_KIND),
        body_optional=True,
        bulk=True,
        response=answers.governance.Scanned,
    ),
]
