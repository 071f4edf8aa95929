"""What `GET /health` tells a client it may rely on: the version and the capabilities to gate on.

Seed 002 tells clients to check the deployed version with /health: the memory change feed came in
0.8.0 (contract_version 1) and its prefix-anchored cursors in 0.9.0 (contract_version 2). A version
number alone makes a client keep a table of which release brought what, so `/health` also names
the capabilities themselves (`features`); a client gates on a member being present and true (or
listing the version it speaks), never on its absence meaning anything. A capability is added here
in the change that builds it, with a test, and never removed without a major version.
"""

from __future__ import annotations

from typing import Any

from lorebase import __version__

FEATURES: dict[str, Any] = {
    # POST /memory/changes: the contract versions served (docs/memory.md).
    "memory_feed": [1, 2],
    # Tags: POST/GET /tags, and a tag wherever at, since, from and to take a Revision.
    "tags": True,
    # History with values=true: before and after hold the same members (the changed Attributes).
    "history_values": "changed",
    # Proposals are tried on open and on each new head: mergeable and conflicts are known early.
    "proposal_merge_check": True,
    # A dry run on a protected branch runs, and says the real execution needs review.
    "dry_run_on_protected": True,
    # Imports and Operations carry extraction evidence; reads show it (docs/provenance.md).
    "extraction_provenance": True,
}


def health_document(status: str, **extra: Any) -> dict[str, Any]:
    """The body of `/health`: status, version, features, and what the status needs (`degraded`,
    `services`)."""
    return {"status": status, "version": __version__, "features": FEATURES, **extra}


__all__ = ["FEATURES", "health_document"]
