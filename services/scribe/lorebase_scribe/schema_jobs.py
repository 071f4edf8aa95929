"""Retention of schema change jobs (docs/schema.md, "Large migrations"): a job that finished
(committed, dry_run or failed) more than `keeper.schema_changes.job_retention_s` ago is deleted,
`_PURGE_BATCH` rows per transaction; a read of it then answers 404 like an unknown id. Its change
set's Revision, receipt and audit row stay: only the job's own row goes. A running job is never
deleted (keeper ends it first: committed, or failed by its deadline or lease).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for annotations only
    from lorebase_store.db import Database

_PURGE_BATCH = 1000


async def purge_schema_jobs(db: Database, retention_s: float) -> int:
    """Delete the jobs finished longer than `retention_s` ago, until none is left; how many."""
    purged = 0
    while True:
        done = await db.run_interaction(
            "schema_job_purge", lambda txn: txn.purge_schema_jobs(retention_s, limit=_PURGE_BATCH)
        )
        purged += done
        if done < _PURGE_BATCH:
            return purged


__all__ = ["purge_schema_jobs"]
