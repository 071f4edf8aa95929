"""The planner's statistics after bulk loads.

PostgreSQL plans each statement from its statistics of the tables, which autovacuum refreshes only
after a while (a minute or more after a large change). Right after an import of 100,000 Records
into a new Domain, the planner still believes the Domain holds a few rows, and can choose to scan
the whole branch where an index lookup of a few keys was meant (measured on context packs). So an
import or source sync of at least `ANALYZE_AFTER` items refreshes the statistics of the tables it
filled, in the background once it has committed: ANALYZE samples a bounded number of rows, so it
takes well under a second even at millions of rows. Imports arriving meanwhile coalesce into one
more run. The same run first merges the index entries such an import left pending
(lorebase_store/bulk.py, `DEFER_INDEX_ROWS`). Both run at niceness `nice`
(keeper.schema_changes.nice; lorebase_store.backend_priority): reads go first meanwhile."""

from __future__ import annotations

import asyncio
import logging

from lorebase_store import Database, bulk

logger = logging.getLogger("lorebase.keeper.statistics")

ANALYZE_AFTER = bulk.DEFER_INDEX_ROWS  # items (records and links) of one import
TABLES = ("records", "links", "history")


class PlannerStatistics:
    def __init__(self, db: Database, *, nice: int = 0) -> None:
        self.db = db
        self.nice = nice
        self._running: asyncio.Task[None] | None = None
        self._again = False

    def refresh_soon(self) -> None:
        """ANALYZE the tables that imports fill, in the background (once more if one is running)."""
        if self._running is not None and not self._running.done():
            self._again = True
            return
        self._running = asyncio.get_running_loop().create_task(self._refresh())

    async def _refresh(self) -> None:
        while True:
            self._again = False
            try:
                await self.db.merge_pending(bulk.PENDING_INDEXES, nice=self.nice)
                await self.db.analyze(TABLES, nice=self.nice)
            except Exception:
                logger.warning("refreshing the planner statistics after an import failed", exc_info=True)
            if not self._again:
                return


__all__ = ["ANALYZE_AFTER", "PlannerStatistics"]
