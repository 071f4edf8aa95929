"""Principals and their keys, and the built-in admin principal (whose key `bootstrap_admin` makes
usable at start). Only the admin principal creates principals and keys (their endpoints' policy);
keys are stored as digests.
A new principal arrives as a `NewPrincipal` (lorebase.contract.admin): its id, type and tenant have
been checked against their grammars already."""

from __future__ import annotations

import secrets
from typing import Any

from lorebase.contract.admin import NewPrincipal
from lorebase.credentials import key_digest
from lorebase.ids import iso, new_id, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import ADMIN_PRINCIPAL, Principal
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


async def bootstrap_admin(rt: Runtime, admin_key: str) -> None:
    """Make `admin_key` a credential of usr_admin (idempotent; the key is stored as a digest)."""
    at = utc_now()

    async def txn_fn(txn: Txn) -> None:
        await txn.insert_principal(ADMIN_PRINCIPAL, "user", "Administrator", at)
        await txn.insert_key(new_id("key"), ADMIN_PRINCIPAL, key_digest(admin_key), at)

    await rt.db.run_interaction("bootstrap_admin", txn_fn)


async def create_principal(rt: Runtime, caller: Principal, new: NewPrincipal) -> dict[str, Any]:
    """Create a principal (admin only); a blank name reads as its id, no tenant as `default`."""
    principal_id, type_ = new.id, new.type
    name = new.name if new.name.strip() else principal_id
    tenant = new.tenant or "default"
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
