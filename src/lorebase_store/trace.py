"""The agent trace: one row per traced call (a step) or note, in session order.

A session is one principal's: its first entry decides whose, and from then on only that principal
and the admin add entries (`claim_trace_session`). No table records the owner: the session's
entries say it, read through the (session_id, principal, id) index with a few bounded probes, and an
advisory lock per session id serialises the first entries so that two principals cannot both start
the same session.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, literal, select, tuple_
from sqlalchemy.dialects.postgresql import aggregate_order_by, array_agg

from lorebase_store.tables import trace_entries
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
        return int(
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
    ) -> list[TraceSessionRow]:
        """Sessions, the latest active first, made of the entries `viewer` may read (its own; None:
        every entry), of `principal` and with an entry in `domain` when given, after the keyset
        `before` (last active at, session id)."""
        c = trace_entries.c
        last_at = func.max(c.at)
        owner = array_agg(aggregate_order_by(c.principal, c.id.asc()))[1]
        stmt = select(
            c.session_id,
            owner.label("principal"),
            func.array_remove(array_agg(aggregate_order_by(c.domain.distinct(), c.domain)), None).label(
                "domains"
            ),
            func.min(c.at).label("started_at"),
            last_at.label("last_at"),
            func.count().filter(c.kind == "step").label("steps"),
            func.count().filter(c.kind == "step", c.status >= 400).label("errors"),
            func.count().filter(c.kind == "note").label("notes"),
        ).group_by(c.session_id)
        if viewer is not None:
            stmt = stmt.where(c.principal == viewer)
        if principal is not None:
            # The sessions principal has entries in (through the index), then those it started.
            mine = select(c.session_id).where(c.principal == principal).distinct()
            stmt = stmt.where(c.session_id.in_(mine)).having(owner == principal)
        if domain is not None:
            stmt = stmt.having(func.bool_or(c.domain == domain))
        if before is not None:
            stmt = stmt.having(tuple_(last_at, c.session_id) < tuple_(literal(before[0]), literal(before[1])))
        rows = await self.conn.execute(stmt.order_by(last_at.desc(), c.session_id.desc()).limit(limit))
        return [
            TraceSessionRow(
                row.session_id,
                row.principal,
                tuple(row.domains or ()),
                row.started_at,
                row.last_at,
                int(row.steps),
                int(row.errors),
                int(row.notes),
            )
            for row in rows
        ]


__all__ = ["TraceSessionRow", "TraceTxn"]
