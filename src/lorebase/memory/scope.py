"""Memory scopes (project, mission, agent, visibility) and the namespaces they name for a caller.

A scope comes from the request body; the tenant and, for private visibility, the private subject
come from the credential. The namespace (tenant, project, mission, agent, visibility, subject) is
the unit of one change journal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.problems import Problem

SCOPE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}")
VISIBILITIES = ("shared", "private")
CAPABILITIES = ("memory_read", "memory_write", "memory_checkpoint")
SCOPE_MEMBERS = ("project_id", "mission_id", "agent_id", "visibility")


@dataclass(frozen=True)
class Scope:
    project_id: str
    mission_id: str | None
    agent_id: str
    visibility: str

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


def _issue(path: str, message: str) -> dict[str, str]:
    return {"path": path, "rule": "memory.scope", "message": message}


def parse_scope(value: Any, *, status: int = 400, path: str = "scope", visibility: bool = True) -> Scope:
    """The scope of a request body, or a problem naming each member to change."""
    if not isinstance(value, dict):
        raise Problem(
            status,
            "invalid-scope",
            f"{path} is an object with project_id, mission_id (or null), agent_id and visibility",
            issues=[_issue(path, "an object")],
        )
    issues = []
    members = SCOPE_MEMBERS if visibility else SCOPE_MEMBERS[:3]
    for member in sorted(set(value) - set(members)):
        issues.append(_issue(f"{path}.{member}", f"{member} is not a member of a scope"))
    for member in ("project_id", "agent_id"):
        item = value.get(member)
        if not isinstance(item, str) or not SCOPE_ID.fullmatch(item):
            issues.append(
                _issue(
                    f"{path}.{member}", f"{member} is 1-128 letters, digits or ._:@/- (starting alphanumeric)"
                )
            )
    mission = value.get("mission_id")
    if "mission_id" not in value or (
        mission is not None and not (isinstance(mission, str) and SCOPE_ID.fullmatch(mission))
    ):
        issues.append(_issue(f"{path}.mission_id", "mission_id is null or 1-128 letters, digits or ._:@/-"))
    seen = value.get("visibility", "shared") if not visibility else value.get("visibility")
    if visibility and seen not in VISIBILITIES:
        issues.append(_issue(f"{path}.visibility", "visibility is 'shared' or 'private'"))
    if issues:
        raise Problem(status, "invalid-scope", "; ".join(i["message"] for i in issues), issues=issues)
    return Scope(value["project_id"], mission, value["agent_id"], str(seen))


__all__ = ["CAPABILITIES", "SCOPE_ID", "VISIBILITIES", "Namespace", "Scope", "parse_scope"]
