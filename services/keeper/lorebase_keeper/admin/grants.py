"""Grants: a role of a principal in a Domain, on some branches (patterns), optionally narrowed to
some Kinds. Creating and deleting one needs `domain.settings`; the grants cache of this process is
forgotten after each change."""

from __future__ import annotations

from typing import Any

from lorebase import names
from lorebase.ids import new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import ROLES, Access
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


def _require_settings(access: Access, domain: Domain) -> None:
    if not access.can("domain.settings", domain.default_branch):
        raise Problem(
            403, "forbidden", f"{access.principal.id} lacks domain.settings on Domain {domain.name!r}"
        )


async def create_grant(rt: Runtime, access: Access, domain: Domain, body: dict[str, Any]) -> dict[str, Any]:
    caller = access.principal
    _require_settings(access, domain)
    issues = []
    unknown = sorted(set(body) - {"principal", "role", "branches", "kinds"})
    for member in unknown:
        issues.append(
            {"path": member, "rule": "unknown_member", "message": f"{member} is not a member of a grant"}
        )
    principal_id = body.get("principal")
    role = body.get("role")
    branches = body.get("branches", ["*"])
    kinds = body.get("kinds")
    if not isinstance(principal_id, str):
        issues.append(
            {"path": "principal", "rule": "grant.principal", "message": "principal is the id of a principal"}
        )
    if role not in ROLES:
        issues.append({"path": "role", "rule": "grant.role", "message": f"role is one of {', '.join(ROLES)}"})
    if (
        not isinstance(branches, list)
        or not branches
        or not all(names.branch_pattern_problem(b) is None for b in branches)
    ):
        issues.append(
            {
                "path": "branches",
                "rule": "grant.branches",
                "message": "branches is a non-empty list of branch names or patterns (main, agent/*)",
            }
        )
    if kinds is not None:
        if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
            issues.append(
                {"path": "kinds", "rule": "grant.kinds", "message": "kinds is a non-empty list of Kind names"}
            )
        else:
            for i, kind in enumerate(kinds):
                if kind not in domain.schema.kinds:
                    issues.append(
                        {"path": f"kinds[{i}]", "rule": "grant.kinds", "message": f"unknown Kind {kind!r}"}
                    )
    if issues:
        raise Problem(422, "validation-failed", "; ".join(i["message"] for i in issues), issues=issues)
    grant_id = new_id("grt")
    at = utc_now()
    assert isinstance(principal_id, str) and isinstance(role, str)

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
    _require_settings(access, domain)
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
