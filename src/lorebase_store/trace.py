"""The agent trace: one row per traced call (a step) or note, in session order."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

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

    async def trace_of(self, session_id: str, principal: str | None, *, limit: int) -> list[dict[str, Any]]:
        """The entries of a session, oldest first (of one principal unless `principal` is None)."""
        stmt = select(trace_entries).where(trace_entries.c.session_id == session_id)
        if principal is not None:
            stmt = stmt.where(trace_entries.c.principal == principal)
        rows = await self.conn.execute(stmt.order_by(trace_entries.c.id).limit(limit))
        return [dict(row._mapping) for row in rows]


__all__ = ["TraceTxn"]
