"""Extractions (migration 0013): the evidence behind extracted values, stored once per digest.

A row is the canonical evidence (document and its digest, span, model, prompt version, extractor,
confidence) under the SHA-256 of its canonical JSON, with the first Revision that used it. Values
name it from their provenance (`$evidence`: Attribute -> id, in the materialised rows and in
history), so the same passage behind many values, or behind the same value on many branches, is one
row. Rows are never updated; writing one that exists changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert

from lorebase_store.tables import extractions
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class ExtractionRow:
    id: str
    document: str
    document_digest: str
    span: dict[str, Any]
    model: str
    prompt_version: str
    extractor: str
    confidence: float | None
    revision: str
    created_by: str
    created_at: datetime


def _time(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value.replace("Z", "+00:00"))


class ExtractionsTxn(TxnBase):
    async def write_extractions(self, domain_id: int, rows: list[dict[str, Any]]) -> None:
        """Insert the extractions a commit references; those stored already stay as they are. Rows
        come as a commit's rows do, JSON-ready (`created_at` an ISO string)."""
        if not rows:
            return
        await self.conn.execute(
            insert(extractions)
            .values([{**row, "domain_id": domain_id, "created_at": _time(row["created_at"])} for row in rows])
            .on_conflict_do_nothing(index_elements=["domain_id", "id"])
        )

    async def get_extractions(self, domain_id: int, ids: list[str]) -> dict[str, ExtractionRow]:
        if not ids:
            return {}
        rows = await self.conn.execute(
            select(extractions).where(
                extractions.c.domain_id == domain_id, extractions.c.id.in_(sorted(set(ids)))
            )
        )
        return {
            row.id: ExtractionRow(
                row.id,
                row.document,
                row.document_digest,
                row.span,
                row.model,
                row.prompt_version,
                row.extractor,
                row.confidence,
                row.revision,
                row.created_by,
                row.created_at,
            )
            for row in rows
        }


__all__ = ["ExtractionRow", "ExtractionsTxn"]
