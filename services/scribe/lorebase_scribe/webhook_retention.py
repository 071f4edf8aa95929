"""Retention, the last step of a webhook delivery pass: delivered and dead deliveries whose last
attempt ended before a time are deleted, `_PURGE_BATCH` rows per transaction.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database

_PURGE_BATCH = 1000


async def purge(db: Database, finished_before: datetime, *, until: float | None = None) -> int:
    """Delete the delivered and dead deliveries that finished before `finished_before`, in
    transactions of _PURGE_BATCH rows, until none is left or `time.monotonic()` is past `until`
    (one batch at least); how many."""
    purged = 0
    while True:
        done = await db.run_interaction(
            "webhook_purge", lambda txn: txn.purge_deliveries(finished_before, limit=_PURGE_BATCH)
        )
        purged += done
        if done < _PURGE_BATCH or (until is not None and time.monotonic() > until):
            return purged


__all__ = ["purge"]
