"""A change set's migration staged over one head, outside the branch's commit lock, and caught up at
its commit with what other commits changed meanwhile.

`stage` runs the whole migration (migrate.py: read, migrate and check, in batches) in one read-only
snapshot of the head (Database.read, REPEATABLE READ), so writes and reads on the branch go on while
it runs. When nothing fails (and it is not a dry run), the rows the commit will write are planned
(`plan_rows`; the Revision id is not known yet, `staged_rows.PLACEHOLDER` stands for it) and COPYed
into PostgreSQL (lorebase_store/staged_rows.py) `ROWS` changes at a time, each chunk dropped from
keeper's memory once sent; keeper keeps what the
answer and the Revision need: the counts (`migrated`, `writes` with its samples, the changes digest
and the changed keys per Kind), the unique values of the migrated Kinds, and the violations.

At the commit, under the branch's lock, `catch_up` asks the branch's history which Records and Links
the commits since the staged head changed (`touched_between`), and migrates those of the Kinds and
Relations the change set migrates again from the head as it is now, in the same way; their staged
rows are replaced by the new ones (and their counts with them), unique values are checked again
across the Kind, and the changes digest is made again from the staged rows. So no write that landed
meanwhile is lost or left unmigrated, and the Revision is still the one step that makes the whole
change visible. The catch-up is refused (409 schema-migration-moved, nothing changed) when more than
`keeper.schema_changes.catch_up_max` Records and Links changed meanwhile, or when it would change a
Record or Link it was not asked to (a derived value of a neighbour): the caller sends the change set
again, and it stages from the new head.

`stage` runs in a process of its own (process.py) for a change set on a branch and for the first
change set a kept merge brings (catch_up.py), and in keeper's transaction for a merge attempt's
catch-up; `catch_up` runs in keeper, under the lock. Both run in slices of a
few milliseconds (lorebase_keeper.writes.pace): no stretch of a million Records' work holds the
process's other requests, and no worker thread takes the GIL from them. The staging, outside the
lock, is paced by `keeper.schema_changes.duty`
(the share of the time it works; it sleeps the rest, in proportion to each slice of work, its
PostgreSQL round trips included), so the foreground keeps the machine's cores; the catch-up, under
the lock, only yields, so the lock is held no longer than the work needs.
"""

from lorebase_keeper.schema_changes.staged.at_commit import catch_up, moved
from lorebase_keeper.schema_changes.staged.result import Staged
from lorebase_keeper.schema_changes.staged.staging import (
    ROWS,
    Staging,
    clear_staged,
    stage,
    staging_alive,
    staging_id,
)

__all__ = [
    "ROWS",
    "Staged",
    "Staging",
    "catch_up",
    "clear_staged",
    "moved",
    "stage",
    "staging_alive",
    "staging_id",
]
