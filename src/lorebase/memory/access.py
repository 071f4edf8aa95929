"""Who calls a memory endpoint and what they may do in a scope (keeper and feed both ask this).

The credential names the principal; the principal's tenant (the `tenant` column of principals,
set when the principal is created) and, for private visibility, the principal itself as private
subject, complete the namespace. Capabilities (memory_read, memory_write, memory_checkpoint) are
granted per exact scope (project, mission or null, agent) by memory grants; the admin principal
holds all of them. Grants are read on every request, so a revoked grant or key stops the next one.
"""

from __future__ import annotations

from dataclasses import dataclass

from lorebase.credentials import ADMIN_PRINCIPAL, presented_digest, unknown_credential
from lorebase.memory.scope import Scope
from lorebase.problems import Problem
from lorebase_store import CredentialRow, Database, Txn


@dataclass(frozen=True)
class MemoryCaller:
    id: str
    tenant: str

    @property
    def is_admin(self) -> bool:
        return self.id == ADMIN_PRINCIPAL


async def authenticate(db: Database, authorization: str | None) -> MemoryCaller:
    """The caller of a credential, or 401."""
    return await caller_of_digest(db, presented_digest(authorization))


async def caller_of_digest(db: Database, digest: str) -> MemoryCaller:
    """The principal of a live credential (the one lookup keeper's Domain calls use too), or 401."""
    row = await db.read_one("credential_for_digest", _credential_for_digest, digest)
    if row is None:
        raise unknown_credential()
    return MemoryCaller(row.principal.id, row.principal.tenant)


async def _credential_for_digest(txn: Txn, digest: str) -> CredentialRow | None:
    return await txn.credential_for_digest(digest)


async def capabilities(txn: Txn, caller: MemoryCaller, scope: Scope) -> set[str]:
    if caller.is_admin:
        return {"memory_read", "memory_write", "memory_checkpoint"}
    return await txn.memory_capabilities(
        caller.id, caller.tenant, scope.project_id, scope.mission_id, scope.agent_id
    )


async def require(txn: Txn, caller: MemoryCaller, scope: Scope, *needed: str) -> None:
    """403 naming the first capability the caller lacks on exactly this scope."""
    held = await capabilities(txn, caller, scope)
    for capability in needed:
        if capability not in held:
            raise forbidden(caller, scope, capability)


def forbidden(caller: MemoryCaller, scope: Scope, capability: str) -> Problem:
    """The 403 of a caller that lacks `capability` on exactly this scope."""
    return Problem(
        403,
        "forbidden",
        f"{caller.id} lacks {capability} on scope project_id={scope.project_id!r}, "
        f"mission_id={scope.mission_id!r}, agent_id={scope.agent_id!r}; ask an admin for a memory grant",
        capability=capability,
        scope=scope.document(),
    )


__all__ = [
    "ADMIN_PRINCIPAL",
    "MemoryCaller",
    "authenticate",
    "caller_of_digest",
    "capabilities",
    "forbidden",
    "require",
]
