"""Suggestions: what Scribe proposes from frequent resolve misses, for a person to accept or dismiss.

One suggestion per Domain and phrase. Scribe's pass refreshes an open one (its target may change as
the schema does) and leaves a decided one alone, so a dismissed phrase is not proposed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import suggestions
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class SuggestionRow:
    id: str
    phrase: str
    type: str  # alias | value_alias | description
    target: dict[str, Any]
    patch: dict[str, Any]
    score: float
    misses: int
    status: str  # open | accepted | dismissed
    created_at: datetime
    updated_at: datetime
    decided_by: str | None
    decided_at: datetime | None


def _row(r: Any) -> SuggestionRow:
    return SuggestionRow(
        r.id,
        r.phrase,
        r.type,
        dict(r.target),
        dict(r.patch),
        float(r.score),
        int(r.misses),
        r.status,
        r.created_at,
        r.updated_at,
        r.decided_by,
        r.decided_at,
    )


class SuggestionsTxn(TxnBase):
    async def save_suggestion(
        self,
        domain_id: int,
        *,
        id: str,
        phrase: str,
        type: str,
        target: dict[str, Any],
        patch: dict[str, Any],
        score: float,
        misses: int,
        at: datetime,
    ) -> None:
        """Add an open suggestion for `phrase`, or refresh the open one; a decided one stays as it is."""
        stmt = pg_insert(suggestions).values(
            id=id,
            domain_id=domain_id,
            phrase=phrase,
            type=type,
            target=target,
            patch=patch,
            score=score,
            misses=misses,
            status="open",
            created_at=at,
            updated_at=at,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["domain_id", "phrase"],
            set_={
                "type": stmt.excluded.type,
                "target": stmt.excluded.target,
                "patch": stmt.excluded.patch,
                "score": stmt.excluded.score,
                "misses": stmt.excluded.misses,
                "updated_at": stmt.excluded.updated_at,
            },
            where=suggestions.c.status == "open",
        )
        await self.conn.execute(stmt)

    async def list_suggestions(
        self, domain_id: int, *, status: str | None, limit: int
    ) -> list[SuggestionRow]:
        query = select(suggestions).where(suggestions.c.domain_id == domain_id)
        if status is not None:
            query = query.where(suggestions.c.status == status)
        rows = await self.conn.execute(
            query.order_by(suggestions.c.misses.desc(), suggestions.c.phrase).limit(limit)
        )
        return [_row(r) for r in rows]

    async def get_suggestion(self, domain_id: int, id: str, *, lock: bool = False) -> SuggestionRow | None:
        query = select(suggestions).where(suggestions.c.domain_id == domain_id, suggestions.c.id == id)
        row = (await self.conn.execute(query.with_for_update() if lock else query)).first()
        return None if row is None else _row(row)

    async def decide_suggestion(
        self, domain_id: int, id: str, *, status: str, principal: str, at: datetime
    ) -> None:
        await self.conn.execute(
            update(suggestions)
            .where(suggestions.c.domain_id == domain_id, suggestions.c.id == id)
            .values(status=status, decided_by=principal, decided_at=at, updated_at=at)
        )


__all__ = ["SuggestionRow", "SuggestionsTxn"]
