"""Administration: principals, their keys, grants, and the built-in admin principal."""

from __future__ import annotations

import secrets
from typing import Any

from lorebase import names
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.auth import ADMIN_PRINCIPAL, ROLES, Access, Principal, key_digest
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn

PRINCIPAL_TYPES = ("service", "user")


def _require_admin(principal: Principal, what: str) -> None:
    if not principal.is_admin:
        raise Problem(403, "forbidden", f"only the admin principal {ADMIN_PRINCIPAL} {what}")


async def bootstrap_admin(rt: Runtime, admin_key: str) -> None:
    """Make `admin_key` a credential of usr_admin (idempotent; the key is stored as a digest)."""
    at = utc_now()

    async def txn_fn(txn: Txn) -> None:
        await txn.insert_principal(ADMIN_PRINCIPAL, "user", "Administrator", at)
        await txn.insert_key(new_id("key"), ADMIN_PRINCIPAL, key_digest(admin_key), at)

    await rt.db.run_interaction("bootstrap_admin", txn_fn)


async def create_principal(
    rt: Runtime, caller: Principal, principal_id: str, type_: str, name: str, tenant: str = ""
) -> dict[str, Any]:
    _require_admin(caller, "creates principals")
    issues = []
    problem = names.PRINCIPAL.problem(principal_id)
    if problem is not None:
        issues.append({"path": "id", "rule": "principal.id", "message": problem})
    if type_ not in PRINCIPAL_TYPES:
        issues.append({"path": "type", "rule": "principal.type", "message": "type is 'service' or 'user'"})
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        name = principal_id if isinstance(principal_id, str) else ""
    tenant = tenant or "default"
    if not names.TENANT.valid(tenant):
        issues.append(
            {
                "path": "tenant",
                "rule": "principal.tenant",
                "message": "tenant is 1-64 letters, digits, '_' or '-', starting with a letter or digit",
            }
        )
    if issues:
        raise Problem(422, "validation-failed", "; ".join(i["message"] for i in issues), issues=issues)
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        created = await txn.insert_principal(principal_id, type_, name, at)
        if created:
            await txn.set_principal_tenant(principal_id, tenant)
            await txn.audit(caller.id, "principal.create", at, target=principal_id, details={"type": type_})
        return created

    if not await rt.db.run_interaction("create_principal", txn_fn):
        raise Problem(409, "already-exists", f"a principal {principal_id!r} exists already")
    return {"id": principal_id, "type": type_, "name": name, "tenant": tenant, "created_at": iso(at)}


async def create_key(rt: Runtime, caller: Principal, principal_id: str) -> dict[str, Any]:
    _require_admin(caller, "creates keys")
    key = "lbk_" + secrets.token_urlsafe(32)
    key_id = new_id("key")
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        if await txn.get_principal(principal_id) is None:
            return False
        await txn.insert_key(key_id, principal_id, key_digest(key), at)
        await txn.audit(caller.id, "key.create", at, target=principal_id, details={"key_id": key_id})
        return True

    if not await rt.db.run_interaction("create_key", txn_fn):
        raise Problem(404, "not-found", f"unknown principal {principal_id!r}")
    return {"id": key_id, "principal": principal_id, "key": key, "created_at": iso(at)}


async def revoke_key(rt: Runtime, caller: Principal, principal_id: str, key_id: str) -> dict[str, Any]:
    _require_admin(caller, "revokes keys")
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        revoked = await txn.revoke_key(principal_id, key_id, at)
        if revoked:
            await txn.audit(caller.id, "key.revoke", at, target=principal_id, details={"key_id": key_id})
        return revoked

    if not await rt.db.run_interaction("revoke_key", txn_fn):
        raise Problem(404, "not-found", f"principal {principal_id!r} has no active key {key_id!r}")
    rt.auth.forget()
    return {"id": key_id, "principal": principal_id, "revoked_at": iso(at)}


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


__all__ = ["bootstrap_admin", "create_grant", "create_key", "create_principal", "delete_grant", "revoke_key"]
