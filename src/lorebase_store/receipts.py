"""What a commit records besides the data: invocations, idempotency receipts, audit rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

from lorebase_store.tables import audit_log, idempotency_receipts, invocations
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class Receipt:
    request_digest: str
    status: int
    response: dict[str, Any]
    revision: str | None


class ReceiptsTxn(TxnBase):
    async def get_receipt(self, domain_id: int, principal: str, key: str) -> Receipt | None:
        row = (
            await self.conn.execute(
                select(idempotency_receipts).where(
                    idempotency_receipts.c.domain_id == domain_id,
                    idempotency_receipts.c.principal == principal,
                    idempotency_receipts.c.key == key,
                )
            )
        ).first()
        return None if row is None else Receipt(row.request_digest, row.status, row.response, row.revision)

    async def invocations_by_id(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Invocation id -> {operation, principal, branch} (never parameters: they may be sensitive)."""
        if not ids:
            return {}
        rows = await self.conn.execute(
            select(
                invocations.c.id, invocations.c.operation, invocations.c.principal, invocations.c.branch
            ).where(invocations.c.id.in_(sorted(set(ids))))
        )
        return {r.id: {"operation": r.operation, "principal": r.principal, "branch": r.branch} for r in rows}

    async def audit(
        self,
        principal: str,
        action: str,
        at: datetime,
        *,
        domain: str | None = None,
        target: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        await self.conn.execute(
            insert(audit_log).values(
                at=at, principal=principal, action=action, domain=domain, target=target, details=details or {}
            )
        )


__all__ = ["Receipt", "ReceiptsTxn"]
