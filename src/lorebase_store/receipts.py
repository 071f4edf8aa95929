"""What a commit records besides the data: invocations, idempotency receipts, audit rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select

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

    async def insert_receipt(
        self, domain_id: int, principal: str, key: str, receipt: Receipt, at: datetime
    ) -> None:
        await self.conn.execute(
            insert(idempotency_receipts).values(
                domain_id=domain_id,
                principal=principal,
                key=key,
                request_digest=receipt.request_digest,
                status=receipt.status,
                response=receipt.response,
                revision=receipt.revision,
                created_at=at,
            )
        )

    async def insert_invocation(
        self,
        invocation_id: str,
        domain_id: int,
        operation: str,
        principal: str,
        branch: str,
        parameters: dict[str, Any],
        revision: str | None,
        at: datetime,
    ) -> None:
        await self.conn.execute(
            insert(invocations).values(
                id=invocation_id,
                domain_id=domain_id,
                operation=operation,
                principal=principal,
                branch=branch,
                parameters=parameters,
                revision=revision,
                created_at=at,
            )
        )

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

    async def audit_rows(self, *, domain: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        stmt = select(audit_log).order_by(audit_log.c.id.desc()).limit(limit)
        if domain is not None:
            stmt = stmt.where(audit_log.c.domain == domain)
        return [dict(row._mapping) for row in await self.conn.execute(stmt)]

    async def count_audit(self) -> int:
        return int(await self.conn.scalar(select(func.count()).select_from(audit_log)) or 0)


__all__ = ["Receipt", "ReceiptsTxn"]
