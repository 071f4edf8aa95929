"""Memory scopes (project, mission, agent, visibility) and the namespaces they name for a caller.

A scope comes from the request body (its shape is the contract's: lorebase.contract.memory); the
tenant and, for private visibility, the private subject come from the credential. The namespace
(tenant, project, mission, agent, visibility, subject) is the unit of one change journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from lorebase.canonical import canonical_json, sha256_hex

if TYPE_CHECKING:
    from lorebase.contract.memory import GrantedScope

CAPABILITIES = ("memory_read", "memory_write", "memory_checkpoint")


@dataclass(frozen=True)
class Scope:
    project_id: str
    mission_id: str | None
    agent_id: str
    visibility: str

    @classmethod
    def of(cls, named: GrantedScope) -> Scope:
        """The scope a request names (a grant's names no visibility: it covers both)."""
        return cls(named.project_id, named.mission_id, named.agent_id, getattr(named, "visibility", "shared"))

    def document(self) -> dict[str, Any]:
        return {
            "project_id": self.project_id,
            "mission_id": self.mission_id,
            "agent_id": self.agent_id,
            "visibility": self.visibility,
        }

    def namespace(self, tenant: str, principal: str) -> Namespace:
        subject = principal if self.visibility == "private" else ""
        return Namespace(tenant, self, subject)


@dataclass(frozen=True)
class Namespace:
    """One authorized namespace: one journal, one ordering."""

    tenant: str
    scope: Scope
    subject: str  # the private subject; "" for shared visibility

    @cached_property
    def key(self) -> str:
        s = self.scope
        parts = [self.tenant, s.project_id, s.mission_id, s.agent_id, s.visibility, self.subject]
        return sha256_hex(canonical_json(parts))


__all__ = ["CAPABILITIES", "Namespace", "Scope"]
