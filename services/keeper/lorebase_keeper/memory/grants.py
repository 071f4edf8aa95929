"""Memory grants: capabilities (memory_read, memory_write, memory_checkpoint) per exact scope."""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso, new_id, utc_now
from lorebase.memory import CAPABILITIES, parse_scope
from lorebase.memory.access import ADMIN_PRINCIPAL, MemoryCaller
from lorebase.problems import Problem
from lorebase_keeper.memory.records import invalid, issue, unknown_members
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


async def create_grant(db: Database, caller: MemoryCaller, body: dict[str, Any]) -> dict[str, Any]:
    _require_admin(caller)
    issues = unknown_members(body, {"principal", "scope", "capabilities"})
    principal_id = body.get("principal")
    if not isinstance(principal_id, str) or not principal_id:
        issues.append(issue("principal", "required", "principal is the id of a principal"))
    scope = None
    try:
        scope = parse_scope(body.get("scope"), status=422, visibility=False)
    except Problem as problem:
        issues += problem.extra.get("issues", [])
    held = body.get("capabilities")
    if (
        not isinstance(held, list)
        or not held
        or not all(c in CAPABILITIES for c in held)
        or len(set(held)) != len(held)
    ):
        issues.append(
            issue(
                "capabilities",
                "memory.capabilities",
                f"capabilities is a non-empty list of {', '.join(CAPABILITIES)}",
            )
        )
    if issues or scope is None:
        raise invalid(issues)
    chosen = list(held) if isinstance(held, list) else []
    at = utc_now()

    async def txn_fn(txn: Txn) -> MemoryGrantRow:
        principal = await txn.memory_principal(str(principal_id))
        if principal is None:
            raise Problem(404, "not-found", f"unknown principal {principal_id!r}")
        grant = MemoryGrantRow(
            new_id("mgr"),
            principal.tenant,
            principal.id,
            scope.project_id,
            scope.mission_id,
            scope.agent_id,
            tuple(c for c in CAPABILITIES if c in chosen),
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
