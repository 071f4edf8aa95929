"""Source syncs: each sync of a Source on a branch, and the Record keys each Source delivered.

A sync is written in the transaction of its commit (CommitsTxn.write_commit_rows): its row, then
the keys it listed, upserted in one statement over arrays (unnest), so a 200,000-Record sync costs
one round trip. Each key remembers the number of the last sync that listed it; a key whose last
sync is older than the Source's last full sync was not in that listing (unseen).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text

from lorebase_store.tables import records, source_keys, source_syncs
from lorebase_store.txn import TxnBase

_UPSERT_KEYS = text(
    """
INSERT INTO source_keys (domain_id, branch, source, kind, key, last_sync)
SELECT :domain_id, :branch, :source, x.kind, x.key, :number
FROM unnest(CAST(:kinds AS text[]), CAST(:keys AS text[])) AS x(kind, key)
ON CONFLICT (domain_id, branch, source, kind, key) DO UPDATE SET last_sync = EXCLUDED.last_sync
"""
)


@dataclass(frozen=True)
class SourceSyncRow:
    source: str
    number: int
    synced_at: datetime
    revision: str | None
    mode: str
    counts: dict[str, Any]


@dataclass(frozen=True)
class SourceState:
    """Where a Source stands on a branch: its last sync and its last full sync (None: never)."""

    last: SourceSyncRow
    last_full: int | None


class SourcesTxn(TxnBase):
    async def last_source_sync(self, domain_id: int, branch: str, source: str) -> int:
        """The number of the Source's last sync on the branch (0: never synced)."""
        number = await self.conn.scalar(
            select(func.max(source_syncs.c.number)).where(
                source_syncs.c.domain_id == domain_id,
                source_syncs.c.branch == branch,
                source_syncs.c.source == source,
            )
        )
        return int(number or 0)

    async def write_source_syncs(self, domain_id: int, branch: str, syncs: list[dict[str, Any]]) -> None:
        """Each sync's row and its keys: {source, number, synced_at, revision, mode, principal, counts,
        keys: [(kind, key)]}."""
        for sync in syncs:
            await self.conn.execute(
                source_syncs.insert().values(
                    domain_id=domain_id,
                    branch=branch,
                    source=sync["source"],
                    number=sync["number"],
                    synced_at=sync["synced_at"],
                    revision=sync["revision"],
                    mode=sync["mode"],
                    principal=sync["principal"],
                    counts=sync["counts"],
                )
            )
            listed = list(dict.fromkeys(sync["keys"]))
            if not listed:
                continue
            await self.conn.execute(
                _UPSERT_KEYS,
                {
                    "domain_id": domain_id,
                    "branch": branch,
                    "source": sync["source"],
                    "number": sync["number"],
                    "kinds": [kind for kind, _ in listed],
                    "keys": [key for _, key in listed],
                },
            )

    async def source_states(self, domain_id: int, branch: str, sources: list[str]) -> dict[str, SourceState]:
        """The last sync and the number of the last full sync of each Source that was ever synced."""
        if not sources:
            return {}
        last_full = (
            select(
                source_syncs.c.source,
                func.max(source_syncs.c.number).filter(source_syncs.c.mode == "full").label("full"),
                func.max(source_syncs.c.number).label("last"),
            )
            .where(
                source_syncs.c.domain_id == domain_id,
                source_syncs.c.branch == branch,
                source_syncs.c.source.in_(sources),
            )
            .group_by(source_syncs.c.source)
            .subquery()
        )
        rows = await self.conn.execute(
            select(source_syncs, last_full.c.full)
            .join(
                last_full,
                (source_syncs.c.source == last_full.c.source) & (source_syncs.c.number == last_full.c.last),
            )
            .where(source_syncs.c.domain_id == domain_id, source_syncs.c.branch == branch)
        )
        return {
            r.source: SourceState(
                SourceSyncRow(r.source, int(r.number), r.synced_at, r.revision, r.mode, dict(r.counts)),
                None if r.full is None else int(r.full),
            )
            for r in rows
        }

    async def unseen_records(
        self, domain_id: int, branch: str, source: str, kinds: list[str], before: int
    ) -> dict[str, int]:
        """Per Kind, the live Records the Source delivered whose keys its sync `before` did not list."""
        rows = await self.conn.execute(
            select(source_keys.c.kind, func.count().label("n"))
            .select_from(
                source_keys.join(
                    records,
                    (records.c.domain_id == source_keys.c.domain_id)
                    & (records.c.branch == source_keys.c.branch)
                    & (records.c.kind == source_keys.c.kind)
                    & (records.c.key == source_keys.c.key),
                )
            )
            .where(
                source_keys.c.domain_id == domain_id,
                source_keys.c.branch == branch,
                source_keys.c.source == source,
                source_keys.c.kind.in_(kinds),
                source_keys.c.last_sync < before,
            )
            .group_by(source_keys.c.kind)
        )
        return {row.kind: int(row.n) for row in rows}

    async def source_syncs_of(self, domain_id: int, revisions: list[str]) -> dict[str, SourceSyncRow]:
        """The source syncs that committed these Revisions, by Revision."""
        if not revisions:
            return {}
        rows = await self.conn.execute(
            select(source_syncs).where(
                source_syncs.c.domain_id == domain_id, source_syncs.c.revision.in_(sorted(set(revisions)))
            )
        )
        return {
            r.revision: SourceSyncRow(
                r.source, int(r.number), r.synced_at, r.revision, r.mode, dict(r.counts)
            )
            for r in rows
        }


__all__ = ["SourceState", "SourceSyncRow", "SourcesTxn"]
