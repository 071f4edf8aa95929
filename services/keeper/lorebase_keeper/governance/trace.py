"""The agent trace: a call made with a session id (the `Lorebase-Session` header, carried to keeper
as `lorebase-session` metadata) becomes a step of that session: the call, its request, status,
latency, counts and the Records (`touched`, Kind/key) and Links (`touched_links`: relation, from,
to) its answer named. Agents attach notes; a session is read back by the principal that made it
(the admin reads any), in order, for the web app to replay, through the reader's current grants
(lorebase_keeper.governance.sessions.TouchedFilter).

A session is one principal's: the principal of its first entry. Only that principal and the admin
add to it. A note from anyone else is refused with 403 (not 404: a session id that nobody uses yet
is free to take, so whether one is taken cannot be hidden from a caller who tries it, and 403 says
what to change: use a session id of your own). A step of another principal's call naming the
session is not kept (the call itself is answered as usual).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from google.protobuf.json_format import MessageToDict

from lorebase import names
from lorebase.contract.admin import Note
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import ADMIN_PRINCIPAL, Principal
from lorebase_keeper.governance.sessions import TouchedFilter
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.vault import has_vault
from lorebase_store import Txn

logger = logging.getLogger("lorebase.keeper.trace")

MAX_TOUCHED = 200


def check_session(session: str) -> str:
    problem = names.SESSION.problem(session)
    if problem is not None:
        raise Problem(400, "invalid-session", problem)
    return session


def _touched(document: Any) -> list[str]:
    found: list[str] = []
    stack = [document]
    while stack and len(found) < MAX_TOUCHED:
        node = stack.pop()
        if isinstance(node, dict):
            for name in ("ref", "from", "to"):
                value = node.get(name)
                if isinstance(value, str) and "/" in value and value not in found:
                    found.append(value)
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return sorted(found)[:MAX_TOUCHED]


def _touched_links(document: Any) -> list[dict[str, str]]:
    """The Links an answer names: objects with `relation`, `from` and `to` (Kind/key), the entries
    of a `links` list under an object naming the `relation` (GET .../links, neighborhood), and those
    of a `links` object keyed by Relation (a context pack)."""
    found: dict[tuple[str, str, str], None] = {}
    stack: list[tuple[Any, str | None]] = [(document, None)]
    while stack and len(found) < MAX_TOUCHED:
        node, inherited = stack.pop()
        if isinstance(node, dict):
            relation = node.get("relation")
            relation = relation if isinstance(relation, str) else inherited
            start, end = node.get("from"), node.get("to")
            if relation and isinstance(start, str) and isinstance(end, str) and "/" in start and "/" in end:
                found[(relation, start, end)] = None
            for name, value in node.items():
                if name == "links" and isinstance(value, dict):  # a context pack's, by Relation
                    stack.extend((links, str(r)) for r, links in value.items() if isinstance(links, list))
                elif isinstance(value, dict | list):
                    stack.append((value, relation if name == "links" else None))
        elif isinstance(node, list):
            stack.extend((value, inherited) for value in node if isinstance(value, dict | list))
    return [{"relation": r, "from": f, "to": t} for r, f, t in sorted(found)[:MAX_TOUCHED]]


# Calls whose body may hold vault values (docs/erasure.md): in a Domain with vault Attributes their
# bodies are not kept, only their size.
_VALUE_BODIES = frozenset({"Import", "SyncSource", "ExecuteOperation", "CreateErasure"})


async def _withheld(rt: Runtime, call: str, request: Any) -> bool:
    name = getattr(request, "domain", None)
    if call not in _VALUE_BODIES or not isinstance(name, str) or not name:
        return False
    try:
        return has_vault((await rt.domains.get(name)).schema)
    except Problem:
        return False


def _request(message: Any, *, withheld: bool = False) -> dict[str, Any]:
    summary = MessageToDict(message, preserving_proto_field_name=True)
    body = getattr(message, "body", None)
    if isinstance(body, bytes) and body:
        summary.pop("body", None)
        if withheld:
            summary["body"] = {"bytes": len(body), "withheld": "the Domain has vault Attributes"}
        elif len(body) <= 16384:
            try:
                summary["body"] = orjson.loads(body)
            except orjson.JSONDecodeError:
                summary["body"] = {"bytes": len(body)}
        else:
            summary["body"] = {"bytes": len(body)}
    return summary


def _made_revisions(document: dict[str, Any]) -> list[str]:
    made = document.get("revisions")
    ids = [r for r in made if isinstance(r, str)] if isinstance(made, list) else []
    for name in ("revision", "merged_revision"):
        if isinstance(document.get(name), str) and document[name] not in ids:
            ids.append(document[name])
    return ids


# Calls that commit: their steps list the Records their Revisions changed.
_WRITES = frozenset(
    {"ExecuteOperation", "Import", "SyncSource", "MergeProposal", "ResolveConflict", "AcceptReconciliation"}
)


async def _written(
    rt: Runtime, call: str, request: Any, document: dict[str, Any], details: dict[str, Any]
) -> None:
    """A write's step: the Records its Revisions changed (`changed`, also in `touched`: a write's
    answer names none), the Revisions it made, the branch they are on (a task write's task branch)
    and the Proposal it opened or added to."""
    proposal = document.get("proposal")
    if isinstance(proposal, dict) and isinstance(proposal.get("id"), str):
        details["proposal"] = proposal["id"]
    name = getattr(request, "domain", None)
    made = _made_revisions(document)
    if call not in _WRITES or not made or not isinstance(name, str) or not name:
        return
    try:
        domain = await rt.domains.get(name)
    except Problem:
        return
    rows = await rt.db.read(
        "records_changed_by", lambda txn: txn.records_changed_by(domain.id, made, limit=MAX_TOUCHED)
    )
    details["revisions"] = made
    if isinstance(document.get("branch"), str) and document["branch"]:
        details["branch"] = document["branch"]
    details["changed"] = [{"ref": f"{kind}/{key}", "change": change} for kind, key, change in rows]
    touched = details["touched"]
    for kind, key, _ in rows:
        if f"{kind}/{key}" not in touched:
            touched.append(f"{kind}/{key}")
    details["touched"] = sorted(touched)[:MAX_TOUCHED]
    details["counts"]["touched"] = len(details["touched"])
    details["counts"]["changed"] = len(details["changed"])


async def record_step(
    rt: Runtime,
    *,
    session: str,
    principal: Principal,
    call: str,
    request: Any,
    status: int,
    latency_ms: float,
    reply_body: bytes | None,
    problem: Problem | None = None,
) -> None:
    """Keep one step; a failure to keep it is logged, never passed on to the call. A refused call
    keeps its problem's code, title and detail (what the caller was told)."""
    try:
        document = None
        if reply_body and len(reply_body) <= 1_048_576 and reply_body[:1] in (b"{", b"["):
            document = orjson.loads(reply_body)
        touched = _touched(document) if document is not None else []
        links = _touched_links(document) if document is not None else []
        counts: dict[str, int] = {"touched": len(touched), "touched_links": len(links)}
        details: dict[str, Any] = {
            "request": _request(request, withheld=await _withheld(rt, call, request)),
            "touched": touched,
            "touched_links": links,
            "counts": counts,
        }
        if reply_body is not None:
            details["bytes"] = len(reply_body)
        if problem is not None:
            details["problem"] = {"code": problem.code, "title": problem.title, "detail": problem.detail}
        if isinstance(document, dict):
            for name in ("records", "results", "candidates", "changes", "links", "neighbors", "seeds"):
                if isinstance(document.get(name), list):
                    counts[name] = len(document[name])
            if document.get("revision"):
                details["revision"] = document["revision"]
            await _written(rt, call, request, document, details)

        async def keep(txn: Txn) -> bool:
            if not await txn.claim_trace_session(session, principal.id, admin=ADMIN_PRINCIPAL):
                return False
            await txn.add_trace_entry(
                session_id=session,
                principal=principal.id,
                domain=getattr(request, "domain", None) or None,
                kind="step",
                call=call,
                status=status,
                latency_ms=round(latency_ms, 3),
                details=details,
                at=utc_now(),
            )
            return True

        if not await rt.db.run_interaction("trace_step", keep):
            logger.info("a call of %s named session %r of another principal: not kept", principal.id, session)
    except Exception:
        logger.exception("could not keep a step of session %s", session)


async def add_note(rt: Runtime, principal: Principal, session: str, note: Note) -> dict[str, Any]:
    """Attach a note to a session of the caller's (the model bounds its text; blank text is refused)."""
    check_session(session)
    text = note.text
    if not text.strip():
        raise Problem(
            422,
            "validation-failed",
            "text is the note: 1 to 8000 characters, not only spaces",
            issues=[{"path": "text", "rule": "required", "message": "a note needs text"}],
        )
    at = utc_now()

    async def keep(txn: Txn) -> int | None:
        if not await txn.claim_trace_session(session, principal.id, admin=ADMIN_PRINCIPAL):
            return None
        return await txn.add_trace_entry(
            session_id=session,
            principal=principal.id,
            domain=note.domain,
            kind="note",
            call=None,
            status=None,
            latency_ms=None,
            details={"text": text},
            at=at,
        )

    entry_id = await rt.db.run_interaction("trace_note", keep)
    if entry_id is None:
        raise Problem(
            403,
            "forbidden",
            f"session {session!r} is another principal's: only its principal and the admin add notes "
            "to it; use a session id of your own",
        )
    return {"session": session, "id": entry_id, "kind": "note", "text": text, "at": iso(at)}


async def get_session(rt: Runtime, principal: Principal, session: str) -> dict[str, Any]:
    check_session(session)
    limit = rt.settings.model.agents.trace.max_entries
    rows = await rt.db.read(
        "trace_of",
        lambda txn: txn.trace_of(session, None if principal.is_admin else principal.id, limit=limit),
    )
    if not rows:
        raise Problem(404, "not-found", f"no session {session!r} of yours")
    shown = TouchedFilter(rt, principal)
    entries = []
    for row in rows:
        entry: dict[str, Any] = {
            "id": row["id"],
            "kind": row["kind"],
            "at": iso(row["at"]),
            "principal": row["principal"],
        }
        if row["domain"]:
            entry["domain"] = row["domain"]
        if row["kind"] == "step":
            entry.update(
                call=row["call"], status=row["status"], latency_ms=row["latency_ms"], **row["details"]
            )
            await shown.step(entry)
            entry["counts"] = {
                **entry.get("counts", {}),
                "touched": len(entry["touched"]),
                "touched_links": len(entry["touched_links"]),
            }
        else:
            entry["text"] = row["details"]["text"]
        entries.append(entry)
    return {"session": session, "entries": entries, "steps": sum(1 for e in entries if e["kind"] == "step")}


__all__ = ["add_note", "check_session", "get_session", "record_step"]
