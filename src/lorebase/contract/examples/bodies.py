"""Request bodies from the seed (and docs/memory.md), adapted to the supply example: what an agent
sends in its loop. The OpenAPI document shows them, and the contract fuzzer starts from them, so
its requests reach real answers (a 2xx) as well as refusals."""

from __future__ import annotations

from typing import Any

CONTEXT: dict[str, Any] = {"refs": ["Supplier/S-1001"], "depth": 1, "budget_tokens": 1500, "format": "json"}
NEIGHBORHOOD: dict[str, Any] = {"refs": ["Supplier/S-1001"], "depth": 1}
TRAVERSE: dict[str, Any] = {"from": ["Supplier/S-1001"], "path": ["supplies", "stocked_at"]}
SEARCH: dict[str, Any] = {"text": "Kavsen", "kinds": ["Supplier", "Contract"]}
RESOLVE: dict[str, Any] = {"text": "average risk score of dormant vendors"}
QUERY: dict[str, Any] = {
    "kind": "Supplier",
    "where": {"attr": "status", "op": "eq", "value": "inactive"},
    "select": ["legal_name", "risk_score"],
}
EXECUTE: dict[str, Any] = {
    "parameters": {"key": "S-1001", "risk_score": 75},
    "dry_run": True,
    "message": "Lower the risk after the audit of 2026-10-20",
}
WEBHOOK: dict[str, Any] = {
    "url": "https://agents.example.com/lorebase",
    "events": ["revision.committed"],
    "branches": ["main"],
}
BRANCH: dict[str, Any] = {"name": "work-1", "from": "main"}
SCOPE: dict[str, Any] = {
    "project_id": "project",
    "mission_id": None,
    "agent_id": "agent",
    "visibility": "shared",
}
MEMORY_CHANGES: dict[str, Any] = {
    "contract_version": 1,
    "scope": SCOPE,
    "query": {"after": None, "through": None, "limit": 100},
}

__all__ = [
    "BRANCH",
    "CONTEXT",
    "EXECUTE",
    "MEMORY_CHANGES",
    "NEIGHBORHOOD",
    "QUERY",
    "RESOLVE",
    "SEARCH",
    "TRAVERSE",
    "WEBHOOK",
]
