"""Grants: a role of a principal in a Domain, on some branches (patterns), optionally narrowed to
some Kinds. Creating and deleting one needs `domain.settings`, and a caller hands out (or
withdraws) only what it holds itself: the endpoints' policies say so and keeper's dispatcher checks
it before these run (lorebase_keeper.access.policy). The grants cache of this process is forgotten
after each change."""

from __future__ import annotations

from typing import Any

from lorebase import names
from lorebase.contract.admin import NewGrant
from lorebase.ids import new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


async def create_grant(rt: Runtime, access: Access, domain: Domain, new: NewGrant) -> dict[str, Any]:
    """Grant a role. The model has checked the members and their types; here each branch pattern is
    checked against the branch grammar and each Kind against the schema."""
    caller = access.principal
    issues = [
        {
            "path": f"branches[{i}]",
            "rule": "grant.branches",
            "message": f"{problem}; a branch name or pattern (main, agent/*)",
        }
        for i, branch in enumerate(new.branches)
        if (problem := names.branch_pattern_problem(branch)) is not None
    ]
    issues += [
        {"path": f"kinds[{i}]", "rule": "grant.kinds", "message": f"unknown Kind {kind!r}"}
        for i, kind in enumerate(new.kinds or ())
        if kind not in domain.schema.kinds
    ]
    if issues:
        raise Problem(422, "validation-failed", "; ".join(i["message"] for i in issues), issues=issues)
    principal_id, role, branches, kinds = new.principal, new.role, list(new.branches), new.kinds
    grant_id = new_id("grt")
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        if await txn.get_principal(principal_id) is None:
            return False
        await txn.insert_grant(grant_id, domain.id, principal_id, role, branches, kinds, caller.id, at)
        await txn.audit(
            caller.id,
            "grant.create",
            at,
            domain=domain.name,
            target=principal_id,
            details={"grant": grant_id, "role": role, "branches": branches, "kinds": kinds},
        )
        return True

    if not await rt.db.run_interaction("create_grant", txn_fn):
        raise Problem(
            422,
            "validation-failed",
            f"unknown principal {principal_id!r}; create it first",
            issues=[{"path": "principal", "rule": "grant.principal", "message": "unknown principal"}],
        )
    rt.auth.forget()
    return {"id": grant_id, "principal": principal_id, "role": role, "branches": branches, "kinds": kinds}


async def delete_grant(rt: Runtime, access: Access, domain: Domain, grant_id: str) -> dict[str, Any]:
    caller = access.principal
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        row = await txn.delete_grant(domain.id, grant_id)
        if row is not None:
            await txn.audit(
                caller.id,
                "grant.delete",
                at,
                domain=domain.name,
                target=row.principal_id,
                details={"grant": grant_id},
            )
        return row is not None

    if not await rt.db.run_interaction("delete_grant", txn_fn):
        raise Problem(404, "not-found", f"unknown grant {grant_id!r}")
    rt.auth.forget()
    return {"id": grant_id, "deleted": True}


__all__ = ["create_grant", "delete_grant"]
