"""Principals and their keys, and the built-in admin principal (whose key `bootstrap_admin` makes
usable at start). Only the admin principal creates principals and keys; keys are stored as digests."""

from __future__ import annotations

import secrets
from typing import Any

from lorebase import names
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import ADMIN_PRINCIPAL, Principal, key_digest
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


__all__ = ["bootstrap_admin", "create_key", "create_principal", "revoke_key"]
