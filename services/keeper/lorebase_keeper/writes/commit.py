"""Commits: a Revision with its materialised rows, history, provenance and outbox event, written in
one statement per branch of one transaction; concurrent commits of a Domain grouped into one
transaction, whatever their branches.

A branch is a serial chain of Revisions, so commits on it serialize on its row lock. Rather than
one transaction (and one WAL flush) per commit, the `Committer` of a keeper process queues the
commits of a Domain and runs a batch of them in one transaction: it locks each branch of the batch
in the order of their names (two groups never wait for each other in a cycle), runs that branch's
commits, each with its own Revision chained on the previous one, and writes them in one statement.
One refused commit (a Problem) leaves the others intact, on its branch and on the others; a
transaction that fails as a whole is retried one commit at a time. A bulk commit (an import) runs
in groups of its own branch, so the others do not wait for its seconds of COPY.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from lorebase import tracing
from lorebase.metrics import COMMITS
from lorebase.problems import Problem
from lorebase_keeper.writes.group_queue import GroupQueue
from lorebase_keeper.writes.moves import BranchMoves
from lorebase_keeper.writes.plan import (
    Committed,
    Head,
    Origin,
    SchemaVersion,
    changes_digest,
    plan_commit,
    revision_id,
)
from lorebase_keeper.writes.view import BranchView, open_view
from lorebase_store import BranchRow, CommitRows, Database, LinkRow, Receipt, RecordRow, Txn

logger = logging.getLogger("lorebase.keeper.commit")

T = TypeVar("T")

Work = Callable[[BranchView, BranchRow, Head], Awaitable[tuple[T, Head, CommitRows | None]]]


@dataclass
class _Pending(Generic[T]):
    branch: str
    work: Work[T]
    prefetch: dict[str, list[str]]
    bulk: bool = False
    # Run in a group of its own (its rows are staged in the database: a large schema change).
    alone: bool = False
    future: asyncio.Future[T] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    revisions: int = 0  # Revisions its work wrote (the commits metric)
    # The writer's `commit` span (lorebase.tracing), stored with the events it commits; "": untraced.
    traceparent: str = ""
    # The schema version the work was prepared under (Domain.stored_digest); False: not checked.
    schema: str | None | bool = False


def schema_changed(branch: str) -> Problem:
    """A write prepared under another schema than its branch stands on by the time it commits."""
    return Problem(
        409,
        "schema-changed",
        f"the schema of branch {branch!r} changed while this write was prepared; send it again "
        "(GET /schema shows the new one)",
        branch=branch,
    )


def remember(view: BranchView, rows: CommitRows) -> None:
    """Tell the view what a planned (not yet written) commit changed."""
    records: dict[tuple[str, str], RecordRow | None] = {}
    for doc in rows.records:
        records[(doc["kind"], doc["key"])] = RecordRow(
            doc["kind"],
            doc["key"],
            doc["values"],
            doc["provenance"],
            doc["created_revision"],
            doc["updated_revision"],
        )
    for doc in rows.deleted_records:
        records[(doc["kind"], doc["key"])] = None
    links: dict[tuple[str, str, str], LinkRow | None] = {}
    for doc in rows.links:
        links[(doc["relation"], doc["from_key"], doc["to_key"])] = LinkRow(
            doc["relation"], doc["from_key"], doc["to_key"], doc["values"], doc["provenance"], doc["revision"]
        )
    for doc in rows.deleted_links:
        links[(doc["relation"], doc["from_key"], doc["to_key"])] = None
    view.apply(records, links)
    for sync in rows.source_syncs:
        view.source_syncs[sync["source"]] = sync["number"]
    for doc in rows.receipts:
        view.receipts[(doc["principal"], doc["key"])] = Receipt(
            doc["request_digest"], doc["status"], doc["response"], doc["revision"]
        )


class Committer:
    """Groups the commits of each Domain into shared transactions (keeper.commit.max_group)."""

    def __init__(
        self,
        db: Database,
        *,
        max_group: int,
        bulk_statement_timeout_s: float = 600,
        moves: BranchMoves | None = None,
    ) -> None:
        self.db = db
        self.bulk_statement_timeout_s = bulk_statement_timeout_s
        self.moves = moves  # told of each branch a committed group moved
        # Keyed by (Domain, None) for the commits of every branch, (Domain, branch) for bulk ones.
        self._groups: GroupQueue[tuple[int, str | None], _Pending[Any]] = GroupQueue(
            "commit", self._commit, max_group=max_group, logger=logger, alone=lambda p: p.alone
        )

    async def run(
        self,
        domain_id: int,
        branch: str,
        work: Work[T],
        *,
        prefetch: dict[str, list[str]] | None = None,
        bulk: bool = False,
        schema: str | None | bool = False,
        alone: bool = False,
    ) -> T:
        """Run `work(view, branch_row, head)` in a commit transaction of `branch`.

        The work checks what it needs through the view and returns (result, new head, rows to write);
        `prefetch` names Records it will read, so the group reads them all in one statement. `schema`
        is the schema version the work was prepared under (Domain.stored_digest): when the branch
        stands on another by then, the work is refused (409 schema-changed) before it runs. `alone`:
        the work runs in a transaction of its own, no other commit before or after it.
        """
        with tracing.span("commit", attributes={"lorebase.branch": branch}):
            pending: _Pending[T] = _Pending(
                branch, work, prefetch or {}, bulk, alone, traceparent=tracing.traceparent(), schema=schema
            )
            self._groups.put((domain_id, branch if bulk else None), pending)
            return await pending.future

    def waiting(self, domain_id: int) -> int:
        """How many commits of a Domain (bulk ones aside) wait for the next group."""
        return self._groups.waiting((domain_id, None))

    async def _commit(
        self, key: tuple[int, str | None], batch: list[_Pending[Any]]
    ) -> list[tuple[_Pending[Any], Any, BaseException | None]]:
        domain_id = key[0]
        timeout = self.bulk_statement_timeout_s if any(p.bulk for p in batch) else None
        # The group's transaction: a span of its first writer's trace, linked to the others'.
        with tracing.follow(
            "commit transaction",
            batch[0].traceparent,
            attributes={"lorebase.commits": len(batch)},
            links=tuple(p.traceparent for p in batch[1:]),
        ):
            outcomes, deferred = await self.db.run_interaction(
                "commit", _commit_group, domain_id, batch, timeout, key[1] is None
            )
        # Their branches were held by another transaction (a merge, an import, a schema change
        # set's commit): each waits for its branch in the branch's own queue, so the Domain's
        # commits on other branches go on meanwhile.
        for pending in deferred:
            self._groups.put((domain_id, pending.branch), pending)
        moved: dict[str, int] = {}
        for pending, _, error in outcomes:
            if error is None:
                moved[pending.branch] = moved.get(pending.branch, 0) + pending.revisions
        COMMITS.inc(sum(moved.values()))
        if self.moves is not None:
            for branch, revisions in moved.items():
                if revisions:
                    self.moves.moved(domain_id, branch)
        return outcomes


async def _commit_group(
    txn: Txn,
    domain_id: int,
    batch: list[_Pending[Any]],
    statement_timeout_s: float | None = None,
    skip_locked: bool = False,
) -> tuple[list[tuple[_Pending[Any], Any, BaseException | None]], list[_Pending[Any]]]:
    """The commits of `batch`, branch by branch in the order of the branches' names (each branch's
    in the order they were queued), in this one transaction: their outcomes, and the commits left
    for later.

    `skip_locked` (a group of the Domain's queue): a branch that another transaction holds (a
    merge, an import, another keeper's group) does not hold up the group's other branches, nor the
    Domain's next groups: its commits are left to the branch's own queue, whose group waits for it."""
    if statement_timeout_s is not None:  # an import's statements may run longer than a write's
        await txn.bulk(statement_timeout_s)
    by_branch: dict[str, list[_Pending[Any]]] = {}
    for pending in batch:
        by_branch.setdefault(pending.branch, []).append(pending)
    # Idempotency keys are the Domain's, not a branch's: a key a commit of an earlier branch of
    # the group planned is held for the later ones (its receipt is not written yet).
    receipts: dict[tuple[str, str], Receipt] = {}
    outcomes: list[tuple[_Pending[Any], Any, BaseException | None]] = []
    planned: list[CommitRows] = []
    wanted = {
        name: sorted(
            {(kind, k) for pending in group for kind, keys in pending.prefetch.items() for k in keys}
        )
        for name, group in by_branch.items()
    }
    locked, busy = await txn.lock_branches(domain_id, wanted, skip_locked=skip_locked)
    deferred = [pending for name in busy for pending in by_branch.pop(name)]
    for branch_name in sorted(by_branch):
        group = by_branch[branch_name]
        if branch_name not in locked:
            problem = Problem(404, "not-found", f"unknown branch {branch_name!r}")
            outcomes += [(pending, None, problem) for pending in group]
            continue
        branch, found = locked[branch_name]
        branch_outcomes, rows = await _commit_branch(txn, branch, found, wanted[branch_name], group, receipts)
        outcomes += branch_outcomes
        planned.append(rows)
    await txn.write_commit_rows(*planned)  # every branch's commits in one statement
    return outcomes, deferred


async def _commit_branch(
    txn: Txn,
    branch: BranchRow,
    found: dict[tuple[str, str], RecordRow] | None,
    wanted: list[tuple[str, str]],
    batch: list[_Pending[Any]],
    receipts: dict[tuple[str, str], Receipt],
) -> tuple[list[tuple[_Pending[Any], Any, BaseException | None]], CommitRows]:
    """Run the commits of a locked branch on the head each leaves (`found`: the `wanted` Records as
    the lock read them; None when it waited for another commit): their outcomes and the rows to
    write."""
    domain_id, branch_name = branch.domain_id, branch.name
    view = await open_view(txn, branch)
    view.receipts.update(receipts)
    if found is not None and branch.mode != "overlay":
        view.stored_records.update({ref: found.get(ref) for ref in wanted})
    else:  # the lock waited for another commit: read what it wrote
        for kind in sorted({kind for kind, _ in wanted}):
            await view.prefetch(kind, [k for other, k in wanted if other == kind])
    head = Head(branch.head, branch.generation, branch.schema_digest)
    merged = CommitRows(domain_id, branch_name)
    outcomes: list[tuple[_Pending[Any], Any, BaseException | None]] = []
    for index, pending in enumerate(batch):
        # A work reads and checks through the view and only plans its writes: a Problem it raises
        # leaves nothing behind, and the group writes every planned commit in one statement.
        pending.revisions = 0
        try:
            if pending.schema is not False and pending.schema != head.schema:
                raise schema_changed(branch_name)
            result, new_head, rows = await pending.work(
                view,
                replace(branch, head=head.revision, generation=head.generation, schema_digest=head.schema),
                head,
            )
        except Problem as problem:
            outcomes.append((pending, None, problem))
            continue
        if rows is not None:
            if pending.traceparent:  # the feed's publish and the deliveries continue its trace
                for event in rows.events:
                    event["traceparent"] = pending.traceparent
            merged.extend(rows)
            if index < len(batch) - 1:  # only the commits after it read the view
                remember(view, rows)
            pending.revisions = len(rows.revisions)
        head = new_head
        outcomes.append((pending, result, None))
    if head.revision != branch.head:
        merged.heads.append({"head": head.revision, "generation": head.generation})
    if branch.mode == "overlay":  # an overlay branch keeps its history only (view.OverlayView)
        merged.records, merged.deleted_records, merged.links, merged.deleted_links = [], [], [], []
    for doc in merged.receipts:
        receipts[(doc["principal"], doc["key"])] = Receipt(
            doc["request_digest"], doc["status"], doc["response"], doc["revision"]
        )
    return outcomes, merged


__all__ = [
    "Committed",
    "Committer",
    "Head",
    "Origin",
    "SchemaVersion",
    "changes_digest",
    "plan_commit",
    "remember",
    "revision_id",
    "schema_changed",
]
