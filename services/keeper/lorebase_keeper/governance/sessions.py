"""The agent sessions list, and what a reader of a session may see of what its steps touched.

`GET /sessions` lists sessions the latest active first, keyset-paginated on (last active, session
id): a principal sees its own (made of its own entries, as GET /sessions/{session} reads them), the
admin every session, with the principal that started it.

A step keeps the Records and Links its answer named, as the session's principal was answered then.
What is shown now goes through the reader's current grants (lorebase_keeper.access.readable): a
Record of a Kind, or a Link of a Relation, it may not read on the step's Domain and branch is left
out, so a grant narrowed since (or a reader other than the principal) learns nothing through the
trace that a read would not answer. The admin reads everything.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from lorebase.contract.admin import ListSessions
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase_keeper.access import Principal, Readable, readable
from lorebase_keeper.runtime import Runtime

DEFAULT_LIMIT = 50
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _cursor_valid(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], int)
        and not isinstance(value[0], bool)
        and isinstance(value[1], str)
    )


def _micros(at: datetime) -> int:
    return (at - _EPOCH) // timedelta(microseconds=1)


async def list_sessions(rt: Runtime, caller: Principal, request: ListSessions) -> dict[str, Any]:
    limit = request.limit or DEFAULT_LIMIT
    before = None
    if request.before:
        micros, session = decode_cursor(request.before, _cursor_valid)
        before = (_EPOCH + timedelta(microseconds=micros), session)
    rows = await rt.db.read(
        "trace_sessions",
        lambda txn: txn.trace_sessions(
            viewer=None if caller.is_admin else caller.id,
            principal=request.principal or None,
            domain=request.domain or None,
            before=before,
            limit=limit + 1,
            proposal=request.proposal or None,
        ),
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "sessions": [
            {
                "session": row.session_id,
                "principal": row.principal,
                "domains": list(row.domains),
                "started_at": iso(row.started_at),
                "last_at": iso(row.last_at),
                "steps": row.steps,
                "errors": row.errors,
                "notes": row.notes,
            }
            for row in rows
        ],
        "next": encode_cursor([_micros(rows[-1].last_at), rows[-1].session_id]) if more else None,
    }


class TouchedFilter:
    """What one reader may see of the Records and Links a session's steps touched, per Domain and
    branch (the readable views are worked out once per reader and kept on its Access)."""

    def __init__(self, rt: Runtime, reader: Principal) -> None:
        self.rt = rt
        self.reader = reader
        self._views: dict[tuple[str, str], Readable | None] = {}

    async def _view(self, domain_name: str, branch: str | None) -> Readable | None:
        key = (domain_name, branch or "")
        if key not in self._views:
            view = None
            try:
                domain = await self.rt.domains.get(domain_name)
                access = await self.rt.auth.access(self.reader, domain.id)
                if access.grants or self.reader.is_admin:
                    view = readable(access, domain, branch or domain.default_branch)
            except Problem:  # a Domain deleted (or renamed) since: nothing of it is shown
                view = None
            self._views[key] = view
        return self._views[key]

    async def step(self, entry: dict[str, Any]) -> None:
        """Leave out of a step's `touched` and `touched_links` what the reader may not read, and what
        names no Kind or Relation of the Domain (an answer's `ref` of an import's source,
        `examples/supply`, is no Record)."""
        entry.setdefault("touched_links", [])
        domain = entry.get("domain")
        view = await self._view(domain, _branch_of(entry.get("request"))) if domain else None
        if view is None:
            if not self.reader.is_admin:
                entry["touched"], entry["touched_links"] = [], []
            return
        entry["touched"] = [ref for ref in entry.get("touched", []) if view.kind(ref.split("/", 1)[0])]
        entry["touched_links"] = [link for link in entry["touched_links"] if view.relation(link["relation"])]


def _branch_of(request: Any) -> str | None:
    """The branch a step's request named (a parameter or a body member); None: the default one."""
    if not isinstance(request, dict):
        return None
    body = request.get("body")
    for branch in (request.get("branch"), body.get("branch") if isinstance(body, dict) else None):
        if isinstance(branch, str) and branch:
            return branch
    return None


__all__ = ["DEFAULT_LIMIT", "TouchedFilter", "list_sessions"]
