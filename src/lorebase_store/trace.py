"""The agent trace: one row per traced call (a step) or note, in session order, and per session and
principal a summary (trace_sessions: first and last time, steps, failed steps, notes, Domains)
written with each entry, which the sessions list reads.

A session is one principal's: its first entry decides whose, and from then on only that principal
and the admin add entries (`claim_trace_session`). Whether a principal may add is read from the
session's entries, through the (session_id, principal, id) index with a few bounded probes, and an
advisory lock per session id serialises the first entries so that two principals cannot both start
the same session.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, any_, case, func, insert, literal, select, tuple_
from sqlalchemy.dialects.postgresql import aggregate_order_by, array_agg
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import trace_entries, trace_sessions
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class TraceSessionRow:
    """One session of the list: whose (the principal of its first entry), its Domains and counts."""

    session_id: str
    principal: str
    domains: tuple[str, ...]
    started_at: datetime
    last_at: datetime
    steps: int
    errors: int
    notes: int


class TraceTxn(TxnBase):
    async def add_trace_entry(
        self,
        *,
        session_id: str,
        principal: str,
        domain: str | None,
        kind: str,
        call: str | None,
        status: int | None,
        latency_ms: float | None,
        details: dict[str, Any],
        at: datetime,
    ) -> int:
        """Keep an entry (the caller holds the session's lock: claim_trace_session) and count it in
        the session's summary of its principal (trace_sessions)."""
        entry_id = int(
            await self.conn.scalar(
                insert(trace_entries)
                .values(
                    session_id=session_id,
                    principal=principal,
                    domain=domain,
                    kind=kind,
                    call=call,
                    status=status,
                    latency_ms=latency_ms,
                    details=details,
                    at=at,
                )
                .returning(trace_entries.c.id)
            )
            or 0
        )
        step = kind == "step"
        new = pg_insert(trace_sessions).values(
            session_id=session_id,
            principal=principal,
            first_entry_id=entry_id,
            started_at=at,
            last_at=at,
            steps=int(step),
            errors=int(step and status is not None and status >= 400),
            notes=int(kind == "note"),
            domains=[domain] if domain else [],
        )
        kept, sent = trace_sessions.c, new.excluded
        await self.conn.execute(
            new.on_conflict_do_update(
                index_elements=["session_id", "principal"],
                set_={
                    "started_at": func.least(kept.started_at, sent.started_at),
                    "last_at": func.greatest(kept.last_at, sent.last_at),
                    "steps": kept.steps + sent.steps,
                    "errors": kept.errors + sent.errors,
                    "notes": kept.notes + sent.notes,
                    "domains": case(
                        (sent.domains.contained_by(kept.domains), kept.domains),
                        else_=kept.domains.concat(sent.domains),
                    ),
                },
            )
        )
        return entry_id

    async def claim_trace_session(self, session_id: str, principal: str, *, admin: str) -> bool:
        """Whether `principal` may add an entry to the session, holding the session's lock to the end
        of the transaction: the admin may; another principal may when no principal but itself and
        the admin has entries there, and the session is not the admin's alone."""
        key = func.hashtextextended(literal("lorebase.trace:") + session_id, 0)
        await self.conn.execute(select(func.pg_advisory_xact_lock(key)))
        if principal == admin:
            return True
        low, high = sorted((principal, admin))
        c = trace_entries.c

        def has(*conditions: Any) -> Any:
            return select(c.id).where(c.session_id == session_id, *conditions).limit(1).exists()

        # Range conditions (not `<>`), so that each probe is one index range scan.
        probes = (
            await self.conn.execute(
                select(
                    has(c.principal < low),
                    has(c.principal > low, c.principal < high),
                    has(c.principal > high),
                    has(c.principal == admin),
                    has(c.principal == principal),
                )
            )
        ).one()
        others, admin_entries, own_entries = any(probes[:3]), probes[3], probes[4]
        return not others and (own_entries or not admin_entries)

    async def trace_of(self, session_id: str, principal: str | None, *, limit: int) -> list[dict[str, Any]]:
        """The entries of a session, oldest first (of one principal unless `principal` is None)."""
        stmt = select(trace_entries).where(trace_entries.c.session_id == session_id)
        if principal is not None:
            stmt = stmt.where(trace_entries.c.principal == principal)
        rows = await self.conn.execute(stmt.order_by(trace_entries.c.id).limit(limit))
        return [dict(row._mapping) for row in rows]

    async def trace_sessions(
        self,
        *,
        viewer: str | None,
        principal: str | None,
        domain: str | None,
        before: tuple[datetime, str] | None,
        limit: int,
        proposal: str | None = None,
    ) -> list[TraceSessionRow]:
        """Sessions, the latest active first, made of the entries `viewer` may read (its own; None:
        every entry), of `principal` and with an entry in `domain` when given, after the keyset
        `before` (last active at, session id). Read from the summaries (trace_sessions): a
        principal's through its index; everyone's grouped per session (its principals: at most the
        one that started it and the admin). `proposal` keeps the sessions with a step that opened
        or added to that Proposal (sessions_naming_proposal)."""
        t = trace_sessions.c
        proposed = None if proposal is None else sessions_naming_proposal(proposal)
        if viewer is not None:  # a principal's entries are all in sessions it started
            stmt = select(trace_sessions).where(t.principal == viewer)
            if principal is not None:
                stmt = stmt.where(t.principal == principal)
            if domain is not None:
                stmt = stmt.where(literal(domain) == any_(t.domains))
            if proposed is not None:
                stmt = stmt.where(t.session_id.in_(proposed))
            if before is not None:
                stmt = stmt.where(
                    tuple_(t.last_at, t.session_id) < tuple_(literal(before[0]), literal(before[1]))
                )
            rows = await self.conn.execute(stmt.order_by(t.last_at.desc(), t.session_id.desc()).limit(limit))
            return [_summary([row]) for row in rows]
        last_at = func.max(t.last_at)
        page = select(t.session_id, last_at.label("last_at")).group_by(t.session_id)
        if principal is not None:
            started = select(t.session_id).where(t.principal == principal)
            owner = array_agg(aggregate_order_by(t.principal, t.first_entry_id.asc()))[1]
            page = page.where(t.session_id.in_(started)).having(owner == principal)
        if domain is not None:
            page = page.having(func.bool_or(literal(domain) == any_(t.domains)))
        if proposed is not None:
            page = page.where(t.session_id.in_(proposed))
        if before is not None:
            page = page.having(tuple_(last_at, t.session_id) < tuple_(literal(before[0]), literal(before[1])))
        chosen = page.order_by(last_at.desc(), t.session_id.desc()).limit(limit).subquery()
        rows = await self.conn.execute(
            select(trace_sessions, chosen.c.last_at.label("session_last_at"))
            .join(chosen, chosen.c.session_id == t.session_id)
            .order_by(chosen.c.last_at.desc(), t.session_id.desc(), t.first_entry_id)
        )
        by_session: dict[str, list[Any]] = {}
        for row in rows:
            by_session.setdefault(row.session_id, []).append(row)
        return [_summary(parts) for parts in by_session.values()]


def _summary(parts: list[Any]) -> TraceSessionRow:
    """One session from its summaries (one per principal; the first started it)."""
    first = min(parts, key=lambda row: row.first_entry_id)
    return TraceSessionRow(
        first.session_id,
        first.principal,
        tuple(sorted({d for row in parts for d in row.domains})),
        min(row.started_at for row in parts),
        max(row.last_at for row in parts),
        sum(row.steps for row in parts),
        sum(row.errors for row in parts),
        sum(row.notes for row in parts),
    )


def sessions_naming_proposal(proposal: str) -> Select[tuple[str]]:
    """The sessions with a step that opened or added to `proposal`: found by the expression index
    trace_entries_proposal (migration 0020), not by reading every step's details."""
    return select(trace_entries.c.session_id).where(
        trace_entries.c.kind == "step", trace_entries.c.details["proposal"].astext == proposal
    )


__all__ = ["TraceSessionRow", "TraceTxn", "sessions_naming_proposal"]
