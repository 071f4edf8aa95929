"""Embeddings of Records: one vector per Record and branch, set by clients, searched by distance.

The column is pgvector's `vector`; queries compare only vectors of the same dimensions (cosine
distance, `<=>`). The table is created by migration 0005 and not described in `tables`, since
SQLAlchemy Core has no `vector` type: these statements are written out.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text

from lorebase_store.txn import TxnBase

_UPSERT = text(
    """
INSERT INTO embeddings (domain_id, branch, kind, key, embedding, dimensions, model, revision, updated_at)
VALUES (:domain_id, :branch, :kind, :key, CAST(:vector AS vector), :dimensions, :model, :revision, :at)
ON CONFLICT (domain_id, branch, kind, key) DO UPDATE
SET embedding = EXCLUDED.embedding, dimensions = EXCLUDED.dimensions, model = EXCLUDED.model,
    revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at
"""
)

_NEAREST = text(
    """
SELECT e.kind, e.key, (e.embedding <=> CAST(:vector AS vector)) AS distance
FROM embeddings e
JOIN records r ON r.domain_id = e.domain_id AND r.branch = e.branch AND r.kind = e.kind AND r.key = e.key
WHERE e.domain_id = :domain_id AND e.branch = :branch AND e.kind = ANY(CAST(:kinds AS text[]))
  AND e.dimensions = :dimensions
ORDER BY distance, e.kind, e.key
LIMIT :limit
"""
)


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in vector) + "]"


class EmbeddingsTxn(TxnBase):
    async def set_embedding(
        self,
        domain_id: int,
        branch: str,
        kind: str,
        key: str,
        vector: list[float],
        model: str,
        revision: str | None,
        at: datetime,
    ) -> None:
        await self.conn.execute(
            _UPSERT,
            {
                "domain_id": domain_id,
                "branch": branch,
                "kind": kind,
                "key": key,
                "vector": _literal(vector),
                "dimensions": len(vector),
                "model": model,
                "revision": revision,
                "at": at,
            },
        )

    async def nearest(
        self, domain_id: int, branch: str, kinds: list[str], vector: list[float], *, limit: int
    ) -> list[tuple[str, str, float]]:
        """(Kind, key, cosine distance) of the live Records nearest to `vector`, nearest first."""
        rows = await self.conn.execute(
            _NEAREST,
            {
                "domain_id": domain_id,
                "branch": branch,
                "kinds": kinds,
                "vector": _literal(vector),
                "dimensions": len(vector),
                "limit": limit,
            },
        )
        return [(row.kind, row.key, round(float(row.distance), 6)) for row in rows]


__all__ = ["EmbeddingsTxn"]
