"""The outbox fence: the highest sequence below which no in-flight transaction can still commit.

Outbox sequences are taken before commit, so transaction A can take 7, B take 8, and B commit first.
A reader that moved its cursor to 8 would never see 7. Every reader of the outbox (the relay, the
event stream, webhook delivery) therefore reads only up to a *fence*, computed like this:

1. A writer takes its transaction id (`pg_current_xact_id()`) before it takes a sequence
   (`CommitsTxn.write_commit_rows`). Transaction ids are handed out in increasing order.
2. The reader reads `taken`, the last sequence handed out (sequences are not transactional: this
   counts in-flight ones), and then takes a transaction id `r` of its own, in one statement outside
   a transaction (a materialized CTE reads `taken` before the outer query takes `r`; the empty
   transaction ends with the statement). Every sequence up to `taken` belongs to a writer whose id
   is below `r`.
3. Once the oldest transaction still in progress (`pg_snapshot_xmin(pg_current_snapshot())`) is
   above `r`, every transaction below `r` has ended, so every sequence up to `taken` is final
   (committed, or rolled back for good): the fence moves to `taken`. The reader then reads rows
   `cursor < sequence <= fence` in a snapshot taken after that check and sees every committed one.

An advance costs two round trips: the candidate's statement, and the oldest running xid's.
Writers never wait for readers or for each other. The fence lags behind by at most the longest
write transaction running at the time (any write transaction of the PostgreSQL cluster counts,
not only commits). Candidates `(taken, r)` wait in `pending` until they resolve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lorebase_store.db import Database
from lorebase_store.store import Txn


async def _candidate(txn: Txn) -> tuple[int, int]:
    return await txn.fence_candidate()


async def _oldest_running(txn: Txn) -> int:
    return await txn.oldest_running_xid()


@dataclass
class Fence:
    """One reader's fence; `advance` moves it as far as is safe and returns it."""

    safe: int = 0
    pending: list[tuple[int, int]] = field(default_factory=list)
    max_pending: int = 64

    async def advance(self, db: Database) -> int:
        taken, xid = await db.read_one("outbox_fence_candidate", _candidate)
        if taken > self.safe:
            self.pending.append((taken, xid))
        oldest = await db.read_one("outbox_oldest_running", _oldest_running)
        for upto, below in self.pending:
            if oldest > below:
                self.safe = max(self.safe, upto)
        # Candidates resolve in order; keep the newest when many wait (the fence only lags more).
        self.pending = [(upto, below) for upto, below in self.pending if upto > self.safe][
            -self.max_pending :
        ]
        return self.safe


__all__ = ["Fence"]
