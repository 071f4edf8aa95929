"""What a request names, looked up for the policy point before its handler runs
(lorebase.contract.policy.Target): the branches it stands on, the Kinds it holds, who owns it, and
the problem that says it is absent.

The dispatcher (api/dispatch.py) answers a target the caller may not read (no data.read on its
branch, or a Kind it may not read) with exactly that problem, so hidden and absent cannot be told
apart. Each loader reads what it needs in one snapshot; the handler reads the row again inside its
own transaction (with its lock): what a policy decides on (a Proposal's branches and author, a
tag's Revision, a candidate's Kind and branch) does not change once made.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lorebase.contract.policy import Target
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable
from lorebase_keeper.branches import find_tag, revision_to_tag
from lorebase_keeper.domains import Domain, branch_of_revision
from lorebase_keeper.erasures import erasure_issues
from lorebase_keeper.governance import candidate_not_found, stewards
from lorebase_keeper.operations import operation_kinds, unknown_operation
from lorebase_keeper.proposals import proposal_not_found
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


@dataclass(frozen=True)
class Found:
    """A target as the policy point sees it."""

    row: Any = None  # what was read (a ProposalRow, CandidateRow, Operation...), for the handler
    branches: dict[str, str] = field(default_factory=dict)  # `tag`, `proposal.target`... -> branch
    kinds: tuple[str, ...] = ()  # Kinds it holds: each must be readable, else it is absent
    relations: tuple[str, ...] = ()  # Relations it reaches (a merge moves their Links): each readable
    owners: frozenset[str] = frozenset()  # the principals who own it (creator, author, stewards)
    permissions: tuple[str, ...] = ()  # what it needs in place of operation.execute (an Operation's)
    absent: Problem | None = None  # the answer to a caller who may not read it


Loader = Callable[[Runtime, Domain, Access, Any], Awaitable[Found]]


def _body(request: Any) -> Any:
    return getattr(request, "body", None)


async def _branch(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    row = await rt.db.read("policy_branch", lambda txn: txn.get_branch(domain.id, request.branch))
    return Found(row, owners=frozenset() if row is None else frozenset({row.created_by}))


async def _tag(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    found = await rt.db.read("policy_tag", lambda txn: find_tag(txn, domain, request.tag))
    absent = Problem(
        404, "not-found", f"no tag {request.tag!r} in Domain {domain.name}; GET /tags lists them"
    )
    if found is None:
        raise absent
    _, branch = found  # as recorded: a deleted branch's archive name
    return Found(found, {"tag": branch_of_revision(branch)}, absent=absent)


async def _revision(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    ref = _body(request).revision

    async def read(txn: Txn) -> Any:
        return await revision_to_tag(txn, domain, ref)

    revision = await rt.db.read("policy_revision", read)
    absent = Problem(
        404,
        "revision-not-found",
        f"no Revision {ref.lower()} in Domain {domain.name}; tag a Revision the Domain has "
        "(GET /branches/{branch} shows a head, GET .../changes lists Revisions)",
    )
    return Found(revision, {"revision": branch_of_revision(revision.branch)}, absent=absent)


async def _proposal(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    row = await rt.db.read("policy_proposal", lambda txn: txn.get_proposal(domain.id, request.proposal))
    absent = proposal_not_found(request.proposal)
    if row is None:
        raise absent
    kinds = tuple(k for k in row.kinds if k in domain.schema.kinds)
    return Found(
        row,
        {"proposal.target": row.target_ref, "proposal.source": row.source_ref},
        kinds,
        owners=frozenset({row.author}),
        absent=absent,
    )


async def _candidate(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    row = await rt.db.read("policy_candidate", lambda txn: txn.get_candidate(domain.id, request.id))
    absent = candidate_not_found(request.id)
    if row is None:
        raise absent
    return Found(
        row,
        {"candidate": row.branch},
        (row.kind,),
        owners=frozenset(stewards(domain, row.kind)),
        absent=absent,
    )


async def _merge(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    """A candidate about to be merged: the survivor takes every Link of the other Record, along
    every Relation at its Kind, so the caller must read them all (a Link it may not see would be
    named and moved)."""
    found = await _candidate(rt, domain, access, request)
    kind = found.kinds[0]
    relations = tuple(name for name, r in domain.schema.relations.items() if kind in (r.from_kind, r.to_kind))
    return Found(found.row, found.branches, found.kinds, relations, found.owners, absent=found.absent)


async def _operation(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    operation = domain.schema.operations.get(request.operation)
    absent = unknown_operation(request.operation)
    if operation is None:
        raise absent
    return Found(
        operation,
        kinds=operation_kinds(domain, operation),
        permissions=tuple(operation.permissions),
        absent=absent,
    )


async def _erasure(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    """The Kinds an erasure names, checked against what the caller may read: a hidden Kind or
    Attribute answers exactly like one that does not exist (erasure_issues)."""
    view = readable(access, domain, domain.default_branch)
    problem = erasure_issues(view, _body(request))
    if problem is not None:
        raise problem
    return Found()


async def _grant(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    row = await rt.db.read("policy_grant", lambda txn: txn.get_grant(domain.id, request.grant_id))
    absent = Problem(404, "not-found", f"unknown grant {request.grant_id!r}")
    if row is None:
        raise absent
    return Found(row, absent=absent)


async def _schema_change(rt: Runtime, domain: Domain, access: Access, request: Any) -> Found:
    """A schema change job: on its branch (hidden there: absent, as an unknown id)."""
    row = await rt.db.read("policy_schema_change", lambda txn: txn.get_schema_job(domain.id, request.id))
    absent = Problem(
        404,
        "not-found",
        f"no schema change job {request.id!r} in Domain {domain.name}; GET /schema/changes lists them",
    )
    if row is None:
        raise absent
    return Found(row, {"schema_change": row.branch}, absent=absent)


LOADERS: dict[Target, Loader] = {
    Target.BRANCH: _branch,
    Target.TAG: _tag,
    Target.REVISION: _revision,
    Target.PROPOSAL: _proposal,
    Target.CANDIDATE: _candidate,
    Target.MERGE: _merge,
    Target.OPERATION: _operation,
    Target.ERASURE: _erasure,
    Target.GRANT: _grant,
    Target.SCHEMA_CHANGE: _schema_change,
}


async def load_target(rt: Runtime, domain: Domain, access: Access, target: Target, request: Any) -> Found:
    if target is Target.NONE:
        return Found()
    return await LOADERS[target](rt, domain, access, request)


__all__ = ["LOADERS", "Found", "load_target"]
