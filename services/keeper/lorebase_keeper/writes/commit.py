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
from datetime import datetime
from typing import Any, Generic, TypeVar

from lorebase import tracing
from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import iso
from lorebase.metrics import COMMITS
from lorebase.problems import Problem
from lorebase_keeper.writes.changes import Change
from lorebase_keeper.writes.group_queue import GroupQueue
from lorebase_keeper.writes.moves import BranchMoves
from lorebase_keeper.writes.view import BranchView, open_view
from lorebase_store import BranchRow, CommitRows, Database, LinkRow, Receipt, RecordRow, RevisionRow, Txn
from lorebase_store.stored_form import ALL

logger = logging.getLogger("lorebase.keeper.commit")

T = TypeVar("T")


@dataclass(frozen=True)
class Head:
    """Where a branch stands inside a commit transaction."""

    revision: str | None
    generation: int
    # The schema version the head stands on (revisions.schema_digest; None: the creation schema).
    schema: str | None = None

    @classmethod
    def of(cls, revision: RevisionRow) -> Head:
        """The head a committed Revision makes."""
        return cls(revision.id, revision.generation, revision.schema_digest)


@dataclass(frozen=True)
class Origin:
    type: str  # operation | import | source_sync | merge | extraction | schema
    ref: str  # invocation id, import source, Source name, ...
    actor: str

    def document(self) -> dict[str, str]:
        return {"type": self.type, "ref": self.ref}


@dataclass(frozen=True)
class SchemaVersion:
    """The schema a Revision changes to: its digest, its document, and the digest its Revisions store
    (None when it is the Domain's creation schema again)."""

    digest: str
    document: dict[str, Any]
    stored: str | None


@dataclass(frozen=True)
class Committed:
    revision: RevisionRow
    changes: list[Change]


Work = Callable[[BranchView, BranchRow, Head], Awaitable[tuple[T, Head, CommitRows | None]]]


@dataclass
class _Pending(Generic[T]):
    branch: str
    work: Work[T]
    prefetch: dict[str, list[str]]
    bulk: bool = False
    future: asyncio.Future[T] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    revisions: int = 0  # Revisions its work wrote (the commits metric)
    # The writer's `commit` span (lorebase.tracing), stored with the events it commits; "": untraced.
    traceparent: str = ""
    # The schema version the work was prepared under (Domain.stored_digest); False: not checked.
    schema: str | None | bool = False


def revision_id(
    *,
    domain: str,
    branch: str,
    parents: list[str],
    changes_digest: str,
    author: str,
    message: str,
    origin: dict[str, str],
    created_at: str,
    schema: str | None = None,
) -> str:
    """SHA-256 hex of the canonical serialisation of a Revision's content; a Revision that changes
    the schema has the new version's digest in it too (`schema`)."""
    content = {
        "domain": domain,
        "branch": branch,
        "parents": parents,
        "changes": changes_digest,
        "author": author,
        "message": message,
        "origin": origin,
        "created_at": created_at,
    }
    if schema is not None:
        content["schema"] = schema
    return sha256_hex(canonical_json(content))


def changes_digest(changes: list[Change]) -> str:
    return sha256_hex(canonical_json([[c.entity, c.name, c.key, c.change, c.after] for c in changes]))


def plan_commit(
    rows: CommitRows,
    *,
    domain: str,
    head: Head,
    changes: list[Change],
    author: str,
    message: str,
    origin: Origin,
    at: datetime,
    stored: tuple[dict[tuple[str, str], RecordRow], dict[tuple[str, str, str], LinkRow]],
    changed_keys_max: int,
    extra_events: list[tuple[str, dict[str, Any]]] | None = None,
    parents: list[str] | None = None,
    provenance_of: Callable[[Change, dict[str, Any], str], dict[str, Any]] | None = None,
    schema: SchemaVersion | None = None,
) -> Committed:
    """Add one Revision to `rows`: the revision row, Records, Links, history and outbox events.
    With `schema`, the Revision changes the schema to that version; else it keeps its head's."""
    branch = rows.branch
    current, current_links = stored
    digest = changes_digest(changes)
    if parents is None:
        parents = [head.revision] if head.revision else []
    created_at = iso(at)
    rev_id = revision_id(
        domain=domain,
        branch=branch,
        parents=parents,
        changes_digest=digest,
        author=author,
        message=message,
        origin=origin.document(),
        created_at=created_at,
        schema=None if schema is None else schema.digest,
    )
    schema_digest = head.schema if schema is None else schema.stored
    generation = head.generation + 1
    # Provenance names the Revision behind each value; its origin, author and time are the Revision's.
    stamp = rev_id
    created = {ALL: stamp}
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    keys: dict[str, list[str]] = {}
    for change in changes:
        if change.entity == "record":
            kinds[change.name] = kinds.get(change.name, 0) + 1
            kind_keys = keys.setdefault(change.name, [])
            if (
                len(kind_keys) < changed_keys_max
            ):  # the event lists at most that many (a load changes 100,000)
                kind_keys.append(change.key)
            before = current.get((change.name, change.key))
            if change.change == "created" and change.after and len(change.attributes) == len(change.after):
                # Every value from this Revision: its stored form (lorebase_store.stored_form), one
                # object for all such Records of the commit unless the hook adds to it.
                provenance = dict(created) if provenance_of is not None else created
            else:
                provenance = {} if before is None or change.change == "created" else dict(before.provenance)
                _stamp(provenance, change, stamp)
            if provenance_of is not None:
                provenance = provenance_of(change, provenance, rev_id)
            if change.after is None:
                rows.deleted_records.append({"kind": change.name, "key": change.key, "seq": generation})
            else:
                rows.records.append(
                    {
                        "kind": change.name,
                        "key": change.key,
                        "values": change.after,
                        "provenance": provenance,
                        "created_revision": rev_id if before is None else before.created_revision,
                        "updated_revision": rev_id,
                        "new": before is None,
                        "seq": generation,
                    }
                )
        else:
            relations[change.name] = relations.get(change.name, 0) + 1
            from_key, _, to_key = change.key.partition("->")
            before_link = current_links.get((change.name, from_key, to_key))
            provenance = (
                {} if before_link is None or change.change == "created" else dict(before_link.provenance)
            )
            provenance["$link"] = stamp
            _stamp(provenance, change, stamp)
            if provenance_of is not None:
                provenance = provenance_of(change, provenance, rev_id)
            if change.after is None:
                rows.deleted_links.append(
                    {"relation": change.name, "from_key": from_key, "to_key": to_key, "seq": generation}
                )
            else:
                rows.links.append(
                    {
                        "relation": change.name,
                        "from_key": from_key,
                        "to_key": to_key,
                        "values": change.after,
                        "provenance": provenance,
                        "revision": rev_id,
                        "new": before_link is None,
                        "seq": generation,
                    }
                )
        rows.history.append(
            {
                "generation": generation,
                "revision": rev_id,
                "entity": change.entity,
                "name": change.name,
                "key": change.key,
                "change": change.change,
                "attributes": change.attributes,
                "before": change.before,
                "after": change.after,
                "provenance": provenance,
            }
        )
    stats = {"partitions_changed": len(kinds) + len(relations), "changes": len(changes)}
    revision = RevisionRow(
        id=rev_id,
        branch=branch,
        generation=generation,
        parents=parents,
        author=author,
        message=message,
        origin=origin.document(),
        stats=stats,
        created_at=at,
        schema_digest=schema_digest,
    )
    if schema is not None and schema.stored is not None:
        rows.schema_versions.append({"digest": schema.digest, "document": schema.document, "created_at": at})
    rows.revisions.append(
        {
            "id": rev_id,
            "branch": branch,
            "generation": generation,
            "parents": parents,
            "author": author,
            "message": message,
            "origin": origin.document(),
            "changes_digest": digest,
            "stats": stats,
            "created_at": created_at,
            "schema_digest": schema_digest,
        }
    )
    truncated = sum(kinds.values()) > changed_keys_max
    if truncated:
        budget = changed_keys_max
        capped: dict[str, list[str]] = {}
        for kind, kind_keys in keys.items():
            capped[kind] = kind_keys[: max(budget, 0)]
            budget -= len(capped[kind])
        keys = {k: v for k, v in capped.items() if v}
    event = {
        "type": "revision.committed",
        "domain": domain,
        "branch": branch,
        "revision": rev_id,
        "parents": parents,
        "generation": generation,
        "author": author,
        "message": message,
        "origin": origin.document(),
        "stats": stats,
        "created_at": created_at,
        "kinds": kinds,
        "relations": relations,
        "schema_changed": schema is not None,
        "keys": keys,
        "keys_truncated": truncated,
    }
    rows.events.append(
        {"type": "revision.committed", "revision": rev_id, "event": event, "created_at": created_at}
    )
    for type_, doc in extra_events or []:
        rows.events.append(
            {
                "type": type_,
                "revision": rev_id,
                "event": {**doc, "head": rev_id, "revisions": [rev_id]},
                "created_at": created_at,
            }
        )
    return Committed(revision, changes)


def schema_changed(branch: str) -> Problem:
    """A write prepared under another schema than its branch stands on by the time it commits."""
    return Problem(
        409,
        "schema-changed",
        f"the schema of branch {branch!r} changed while this write was prepared; send it again "
        "(GET /schema shows the new one)",
        branch=branch,
    )


_NOTES = ("$via", "$evidence")


def _stamp(provenance: dict[str, Any], change: Change, stamp: str) -> None:
    """Name `stamp` as the Revision behind each changed value; what the provenance said of the old
    values (`$via`: the merge that brought one; `$evidence`: its extraction) goes with them."""
    notes = {note: dict(provenance[note]) for note in _NOTES if provenance.get(note)}
    after = change.after
    for name in change.attributes:
        for held in notes.values():
            held.pop(name, None)
        if after is not None and name in after:
            provenance[name] = stamp
        else:
            provenance.pop(name, None)
    for note in _NOTES:
        if notes.get(note):
            provenance[note] = notes[note]
        else:
            provenance.pop(note, None)


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
            "commit", self._commit, max_group=max_group, logger=logger
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
    ) -> T:
        """Run `work(view, branch_row, head)` in a commit transaction of `branch`.

        The work checks what it needs through the view and returns (result, new head, rows to write);
        `prefetch` names Records it will read, so the group reads them all in one statement. `schema`
        is the schema version the work was prepared under (Domain.stored_digest): when the branch
        stands on another by then, the work is refused (409 schema-changed) before it runs.
        """
        with tracing.span("commit", attributes={"lorebase.branch": branch}):
            pending: _Pending[T] = _Pending(
                branch, work, prefetch or {}, bulk, traceparent=tracing.traceparent(), schema=schema
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
                "commit", _commit_group, domain_id, batch, timeout
            )
        if deferred:  # their branches were held by another transaction: the next group takes them
            self._groups.requeue(key, deferred)
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
    txn: Txn, domain_id: int, batch: list[_Pending[Any]], statement_timeout_s: float | None = None
) -> tuple[list[tuple[_Pending[Any], Any, BaseException | None]], list[_Pending[Any]]]:
    """The commits of `batch`, branch by branch in the order of the branches' names (each branch's
    in the order they were queued), in this one transaction: their outcomes, and the commits left
    for the next group.

    A branch that another transaction holds (a merge, an import, another keeper's group) does not
    hold up the group's other branches: its commits are left for the next group. A group with
    nothing else to commit waits for the lock."""
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
    locked, busy = await txn.lock_branches(domain_id, wanted, skip_locked=len(wanted) > 1)
    if busy and not locked:
        locked, _ = await txn.lock_branches(domain_id, {name: wanted[name] for name in busy})
        busy = []
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
