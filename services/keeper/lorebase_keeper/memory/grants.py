"""Memory grants: capabilities (memory_read, memory_write, memory_checkpoint) per exact scope."""

from __future__ import annotations

from typing import Any

from lorebase.contract.memory import MemoryGrantBody
from lorebase.ids import iso, new_id, utc_now
from lorebase.memory import CAPABILITIES, Scope
from lorebase.memory.access import ADMIN_PRINCIPAL, MemoryCaller
from lorebase.problems import Problem
from lorebase_keeper.memory.records import invalid, issue
from lorebase_store import Database, MemoryGrantRow, Txn


def _require_admin(caller: MemoryCaller) -> None:
    if not caller.is_admin:
        raise Problem(403, "forbidden", f"only the admin principal {ADMIN_PRINCIPAL} manages memory grants")


def _document(grant: MemoryGrantRow) -> dict[str, Any]:
    return {
        "id": grant.id,
        "principal": grant.principal_id,
        "tenant": grant.tenant,
        "scope": {"project_id": grant.project_id, "mission_id": grant.mission_id, "agent_id": grant.agent_id},
        "capabilities": list(grant.capabilities),
    }


async def create_grant(db: Database, caller: MemoryCaller, body: MemoryGrantBody) -> dict[str, Any]:
    """Grant `body.capabilities` on exactly `body.scope` to a principal (the admin only); 422 for a
    capability named twice, 404 for an unknown principal."""
    _require_admin(caller)
    if len(set(body.capabilities)) != len(body.capabilities):
        raise invalid([issue("capabilities", "memory.capabilities", "capabilities names a capability twice")])
    scope = Scope.of(body.scope)
    at = utc_now()

    async def txn_fn(txn: Txn) -> MemoryGrantRow:
        principal = await txn.memory_principal(body.principal)
        if principal is None:
            raise Problem(404, "not-found", f"unknown principal {body.principal!r}")
        grant = MemoryGrantRow(
            new_id("mgr"),
            principal.tenant,
            principal.id,
            scope.project_id,
            scope.mission_id,
            scope.agent_id,
            tuple(c for c in CAPABILITIES if c in body.capabilities),
        )
        await txn.insert_memory_grant(grant, caller.id, at)
        await txn.audit(caller.id, "memory_grant.create", at, target=principal.id, details=_document(grant))
        return grant

    grant = await db.run_interaction("memory_grant_create", txn_fn)
    return {**_document(grant), "created_at": iso(at)}


async def delete_grant(db: Database, caller: MemoryCaller, grant_id: str) -> dict[str, Any]:
    _require_admin(caller)
    at = utc_now()

    async def txn_fn(txn: Txn) -> MemoryGrantRow | None:
        grant = await txn.delete_memory_grant(grant_id)
        if grant is not None:
            await txn.audit(
                caller.id, "memory_grant.delete", at, target=grant.principal_id, details=_document(grant)
            )
        return grant

    grant = await db.run_interaction("memory_grant_delete", txn_fn)
    if grant is None:
        raise Problem(404, "not-found", f"no memory grant {grant_id!r}")
    return {**_document(grant), "deleted_at": iso(at)}


__all__ = ["create_grant", "delete_grant"]
