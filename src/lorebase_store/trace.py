"""The agent trace: one row per traced call (a step) or note, in session order.

A session is one principal's: its first entry decides whose, and from then on only that principal
and the admin add entries (`claim_trace_session`). No table records the owner: the session's
entries say it, read through the (session_id, principal, id) index with a few bounded probes, and an
advisory lock per session id serialises the first entries so that two principals cannot both start
the same session.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, literal, select

from lorebase_store.tables import trace_entries
from lorebase_store.txn import TxnBase


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


__all__ = ["TraceTxn"]
