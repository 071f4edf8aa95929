"""Suggestions (governance): what Scribe proposes from frequent resolve misses, reviewed by a person.

Reading and deciding them needs `domain.settings` on the default branch: they are proposals to
change the schema, and they show the words agents asked for. A suggestion whose target Kind the
caller may not read is invisible (404 like an unknown one). Accepting records the decision only:
nothing changes the schema until a person edits it; the answer carries the schema patch to apply.
"""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.runtime import Runtime
from lorebase_store import SuggestionRow, Txn

STATUSES = ("open", "accepted", "dismissed")
DECISIONS = {"accept": "accepted", "dismiss": "dismissed"}
LIST_LIMIT = 500


def _document(row: SuggestionRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "phrase": row.phrase,
        "type": row.type,
        "target": row.target,
        "patch": row.patch,
        "score": row.score,
        "misses": row.misses,
        "status": row.status,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "decided_by": row.decided_by,
        "decided_at": None if row.decided_at is None else iso(row.decided_at),
    }


def _visible(access: Access, domain: Domain, row: SuggestionRow) -> bool:
    kind = row.target.get("kind")
    return kind is None or kind in readable_view(access, domain, domain.default_branch).kinds


async def list_suggestions(rt: Runtime, access: Access, domain: Domain, status: str) -> dict[str, Any]:
    status = status or "open"
    if status != "all" and status not in STATUSES:
        raise Problem(
            400,
            "invalid-parameter",
            f"status is open (the default), accepted, dismissed or all, not {status!r}",
            parameter="status",
        )
    rows = await rt.db.read(
        "list_suggestions",
        lambda txn: txn.list_suggestions(
            domain.id, status=None if status == "all" else status, limit=LIST_LIMIT
        ),
    )
    return {
        "domain": domain.name,
        "suggestions": [_document(row) for row in rows if _visible(access, domain, row)],
    }


async def decide(
    rt: Runtime, access: Access, domain: Domain, suggestion_id: str, action: str
) -> dict[str, Any]:
    """Accept or dismiss an open suggestion; deciding it again the same way answers it unchanged."""
    status = DECISIONS[action]

    async def work(txn: Txn) -> SuggestionRow:
        row = await txn.get_suggestion(domain.id, suggestion_id, lock=True)
        if row is None or not _visible(access, domain, row):
            raise Problem(
                404, "not-found", f"unknown suggestion {suggestion_id!r}; GET /suggestions lists them"
            )
        if row.status == status:
            return row
        if row.status != "open":
            raise Problem(
                409,
                "suggestion-decided",
                f"suggestion {suggestion_id} is already {row.status}; only an open suggestion can be decided",
                decided=row.status,
            )
        at = utc_now()
        await txn.decide_suggestion(
            domain.id, suggestion_id, status=status, principal=access.principal.id, at=at
        )
        await txn.audit(
            access.principal.id,
            f"suggestion.{action}",
            at,
            domain=domain.name,
            target=suggestion_id,
            details={"phrase": row.phrase, "type": row.type, "target": row.target},
        )
        decided = await txn.get_suggestion(domain.id, suggestion_id)
        assert decided is not None
        return decided

    row = await rt.db.run_interaction(f"suggestion_{action}", work)
    document = {"domain": domain.name, "suggestion": _document(row)}
    if status == "accepted":
        document["schema_patch"] = row.patch
        document["note"] = (
            "accepting records the decision only: the schema is unchanged until a person edits it "
            "and applies schema_patch"
        )
    return document


__all__ = ["decide", "list_suggestions"]
