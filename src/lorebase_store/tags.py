"""Tags: immutable names of Revisions of a Domain (migration 0013).

A tag is written once and never moved; deleting it frees the name. Listing is newest first, paged
by the tag's sequence, which only grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert

from lorebase_store.tables import tags
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class TagRow:
    name: str
    revision: str
    seq: int
    created_by: str
    created_at: datetime


def _tag(row: Any) -> TagRow:
    return TagRow(row.name, row.revision, row.seq, row.created_by, row.created_at)


class TagsTxn(TxnBase):
    async def insert_tag(self, domain_id: int, name: str, revision: str, *, by: str, at: datetime) -> bool:
        """Create a tag; False when the name is taken."""
        result = await self.conn.execute(
            insert(tags)
            .values(domain_id=domain_id, name=name, revision=revision, created_by=by, created_at=at)
            .on_conflict_do_nothing(index_elements=["domain_id", "name"])
            .returning(tags.c.seq)
        )
        return result.first() is not None

    async def get_tag(self, domain_id: int, name: str) -> TagRow | None:
        row = (
            await self.conn.execute(select(tags).where(tags.c.domain_id == domain_id, tags.c.name == name))
        ).first()
        return None if row is None else _tag(row)

    async def list_tags(self, domain_id: int, *, before: int | None, limit: int) -> list[TagRow]:
        """Tags newest first (by sequence), those older than `before` when given."""
        cond = [tags.c.domain_id == domain_id]
        if before is not None:
            cond.append(tags.c.seq < before)
        rows = await self.conn.execute(select(tags).where(*cond).order_by(tags.c.seq.desc()).limit(limit))
        return [_tag(row) for row in rows]

    async def delete_tag(self, domain_id: int, name: str) -> TagRow | None:
        """Delete a tag; the row it had, None when there was none."""
        row = (
            await self.conn.execute(
                delete(tags).where(tags.c.domain_id == domain_id, tags.c.name == name).returning(tags)
            )
        ).first()
        return None if row is None else _tag(row)


__all__ = ["TagRow", "TagsTxn"]
