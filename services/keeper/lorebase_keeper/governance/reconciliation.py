"""Reconciliation candidates (docs/reconciliation.md): listed, read, dismissed and scanned here;
accepted in record_merge.py.

Who may do what (decided here, documented in docs/reconciliation.md):

- reading a candidate needs `data.read` on its branch and its Kind readable (a grant narrowed to
  other Kinds sees no candidate of this one: 404 like an unknown one); evidence values of an
  Attribute the caller lacks the clearance for are shown as `***` with `redacted: true`;
- dismissing needs to be a steward of the Kind or to hold `proposal.review` on the branch: it is a
  review decision ("these are two things"), not a write of data;
- scanning now needs `proposal.review` on the default branch (Scribe scans on its own schedule).
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.reconciliation import Dismiss
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.reconciliation import scan_branch
from lorebase_keeper.access import Access, Readable, readable, readable_kind
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import CandidateRow, Txn

STATUSES = ("open", "accepted", "dismissed")
OPERATION = "reconciliation.merge"  # the invocations' name of an accept's merge (lineage shows it)


def stewards(domain: Domain, kind: str) -> list[str]:
    found = domain.schema.kinds.get(kind)
    return sorted(found.stewards) if found is not None else []


def _masked(view: Readable, kind: str, item: dict[str, Any]) -> dict[str, Any]:
    if item.get("attribute") in view.cleared(kind):
        return dict(item)
    return {**item, "values": ["***" for _ in item.get("values", [])], "redacted": True}


def candidate_document(domain: Domain, view: Readable, row: CandidateRow) -> dict[str, Any]:
    """A candidate as `view`'s caller may read it."""
    return {
        "id": row.id,
        "domain": domain.name,
        "branch": row.branch,
        "kind": row.kind,
        "record_a": f"{row.kind}/{row.record_a}",
        "record_b": f"{row.kind}/{row.record_b}",
        "score": row.score,
        "evidence": [_masked(view, row.kind, item) for item in row.evidence],
        "status": row.status,
        "revision": row.revision,
        "stewards": stewards(domain, row.kind),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "decided_by": row.decided_by,
        "decided_at": None if row.decided_at is None else iso(row.decided_at),
        "reason": row.reason,
        "result": row.result,
    }


def candidate_not_found(candidate_id: str) -> Problem:
    return Problem(
        404, "not-found", f"unknown reconciliation candidate {candidate_id!r}; GET /reconciliation lists them"
    )


async def find_candidate(
    txn: Txn, access: Access, domain: Domain, candidate_id: str, *, lock: bool = False
) -> tuple[CandidateRow, Readable]:
    """The candidate if the caller may read it (its Kind readable on its branch: without data.read
    there, none is)."""
    row = await txn.get_candidate(domain.id, candidate_id, lock=lock)
    if row is None:
        raise candidate_not_found(candidate_id)
    view = readable(access, domain, row.branch)
    if row.kind not in view.kinds:
        raise candidate_not_found(candidate_id)
    return row, view


async def list_candidates(
    rt: Runtime,
    access: Access,
    domain: Domain,
    *,
    status: str,
    kind: str,
    assigned: str,
    limit: int | None,
    cursor: str,
) -> dict[str, Any]:
    if status not in ("", "all", *STATUSES):
        raise Problem(
            400,
            "invalid-parameter",
            f"status is open (the default), accepted, dismissed or all, not {status!r}",
            parameter="status",
        )
    if assigned not in ("", "me"):
        raise Problem(400, "invalid-parameter", f"assigned takes me, not {assigned!r}", parameter="assigned")
    if limit is not None and not 1 <= limit <= 200:
        raise Problem(400, "invalid-parameter", "limit is 1 to 200 (left out: 50)", parameter="limit")
    limit = limit or 50
    branch = domain.default_branch
    view = readable(access, domain, branch)
    kinds = [readable_kind(access, domain, branch, kind).name] if kind else list(view.kinds)
    if assigned == "me":
        kinds = [k for k in kinds if access.principal.id in domain.schema.kinds[k].stewards]
    wanted = None if status == "all" else (status or "open")

    async def read(txn: Txn) -> dict[str, Any]:
        if cursor and await txn.get_candidate(domain.id, cursor) is None:
            raise Problem(
                400, "invalid-cursor", "cursor is not one this API returned; start again without it"
            )
        rows = await txn.list_candidates(domain.id, status=wanted, kinds=kinds, after=cursor, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return {
            "domain": domain.name,
            "candidates": [candidate_document(domain, view, row) for row in rows],
            "next_cursor": rows[-1].id if more and rows else None,
        }

    return await rt.db.read("list_reconciliation", read)


async def get_candidate(rt: Runtime, access: Access, domain: Domain, candidate_id: str) -> dict[str, Any]:
    """A candidate with its two Records as they are now on its branch (null values: deleted since)."""

    async def read(txn: Txn) -> dict[str, Any]:
        row, view = await find_candidate(txn, access, domain, candidate_id)
        found = await txn.get_records(domain.id, row.branch, row.kind, [row.record_a, row.record_b])
        records = []
        for key in (row.record_a, row.record_b):
            entry: dict[str, Any] = {"ref": f"{row.kind}/{key}", "key": key, "values": None}
            if key in found:
                shown, redacted = view.values(row.kind, found[key].values)
                entry["values"] = shown
                if redacted:
                    entry["redacted"] = redacted
            records.append(entry)
        return {**candidate_document(domain, view, row), "records": records}

    return await rt.db.read("get_reconciliation", read)


def require_open(row: CandidateRow, action: str) -> None:
    if row.status != "open":
        raise Problem(
            409,
            "candidate-decided",
            f"candidate {row.id} is already {row.status}; only an open candidate can be {action}ed"
            + (f" (result: {row.result})" if row.result else ""),
            decided=row.status,
            result=row.result,
        )


async def dismiss(
    rt: Runtime, access: Access, domain: Domain, candidate_id: str, body: Dismiss
) -> dict[str, Any]:
    """Dismiss an open candidate: its pair is never proposed again."""

    async def work(txn: Txn) -> dict[str, Any]:
        row, view = await find_candidate(txn, access, domain, candidate_id, lock=True)
        principal = access.principal.id
        require_open(row, "dismiss")
        at = utc_now()
        await txn.decide_candidate(
            domain.id, row.id, status="dismissed", principal=principal, at=at, reason=body.reason, result=None
        )
        await txn.audit(
            principal,
            "reconciliation.dismiss",
            at,
            domain=domain.name,
            target=row.id,
            details={"kind": row.kind, "records": [row.record_a, row.record_b], "reason": body.reason},
        )
        decided = await txn.get_candidate(domain.id, row.id)
        assert decided is not None
        return {"domain": domain.name, "candidate": candidate_document(domain, view, decided)}

    return await rt.db.run_interaction("reconciliation_dismiss", work)


async def scan(rt: Runtime, access: Access, domain: Domain) -> dict[str, Any]:
    """Compute the candidates of the default branch now (what Scribe's job does per pass)."""
    branch_name = domain.default_branch
    limits = domain.settings.model.scribe.reconciliation

    async def work(txn: Txn) -> dict[str, Any]:
        await txn.repeatable_read()
        await txn.bulk(domain.settings.model.services.bulk_deadline_s)
        branch = await txn.get_branch(domain.id, branch_name)
        if branch is None:
            raise Problem(404, "not-found", f"unknown branch {branch_name!r}")
        result = await scan_branch(
            txn, domain.id, branch, domain.schema, domain.row.schema, limits, utc_now(), force=True
        )
        return {
            "domain": domain.name,
            "branch": result.branch,
            "revision": result.revision,
            "scanned": result.scanned,
            "candidates": result.candidates,
            "dropped": result.dropped,
        }

    return await rt.db.run_interaction("reconciliation_scan", work)


__all__ = [
    "OPERATION",
    "candidate_document",
    "dismiss",
    "find_candidate",
    "get_candidate",
    "list_candidates",
    "candidate_not_found",
    "require_open",
    "scan",
    "stewards",
]
