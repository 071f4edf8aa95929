"""Commits: a Revision with its materialised rows, history, provenance and outbox event, in one
transaction; concurrent commits on one branch grouped into one database transaction.

A branch is a serial chain of Revisions, so commits on it serialize on its row lock. Rather than
one transaction (and one WAL flush) per commit, the `Committer` of a keeper process queues the
commits of a branch and runs a batch of them in one transaction: each in its own savepoint, each
with its own Revision chained on the previous one, so one failing commit leaves the others intact.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, TypeVar

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import iso
from lorebase.problems import Problem
from lorebase_keeper.changes import Change
from lorebase_store import BranchRow, Database, HistoryRow, LinkRow, RecordRow, RevisionRow, Txn

logger = logging.getLogger("lorebase.keeper.commit")

T = TypeVar("T")


@dataclass(frozen=True)
class Head:
    """Where a branch stands inside a commit transaction."""

    revision: str | None
    generation: int


@dataclass(frozen=True)
class Origin:
    type: str  # operation | import | merge
    ref: str  # invocation id, import source, ...
    actor: str

    def document(self) -> dict[str, str]:
        return {"type": self.type, "ref": self.ref}


@dataclass(frozen=True)
class Committed:
    revision: RevisionRow
    changes: list[Change]


@dataclass
class _Pending(Generic[T]):
    work: Callable[[Txn, BranchRow, Head], Awaitable[tuple[T, Head]]]
    future: asyncio.Future[T] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


def revision_id(
    *, domain: str, branch: str, parents: list[str], changes_digest: str, author: str, message: str,
    origin: dict[str, str], created_at: str,
) -> str:
    """SHA-256 hex of the canonical serialisation of a Revision's content."""
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
    return sha256_hex(canonical_json(content))


def changes_digest(changes: list[Change]) -> str:
    return sha256_hex(canonical_json([[c.entity, c.name, c.key, c.change, c.after] for c in changes]))


async def write_commit(
    txn: Txn,
    *,
    domain_id: int,
    domain: str,
    branch: str,
    head: Head,
    changes: list[Change],
    author: str,
    message: str,
    origin: Origin,
    at: datetime,
    current: dict[tuple[str, str], RecordRow],
    current_links: dict[tuple[str, str, str], LinkRow],
    changed_keys_max: int,
    extra_events: list[tuple[str, dict[str, Any]]] | None = None,
) -> Committed:
    """Write one Revision: the revision row, Records, Links, history and the outbox event."""
    digest = changes_digest(changes)
    parents = [head.revision] if head.revision else []
    created_at = iso(at)
    rev_id = revision_id(
        domain=domain, branch=branch, parents=parents, changes_digest=digest, author=author, message=message,
        origin=origin.document(), created_at=created_at,
    )
    generation = head.generation + 1
    stamp = {"revision": rev_id, "origin": origin.document(), "actor": origin.actor, "at": created_at}
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    keys: dict[str, list[str]] = {}
    record_rows: list[RecordRow] = []
    deleted: dict[str, list[str]] = {}
    link_rows: list[LinkRow] = []
    deleted_links: dict[str, list[tuple[str, str]]] = {}
    history_rows: list[HistoryRow] = []
    for change in changes:
        if change.entity == "record":
            kinds[change.name] = kinds.get(change.name, 0) + 1
            keys.setdefault(change.name, []).append(change.key)
            before = current.get((change.name, change.key))
            provenance = {} if before is None or change.change == "created" else dict(before.provenance)
            for name in change.attributes:
                if change.after is not None and name in change.after:
                    provenance[name] = stamp
                else:
                    provenance.pop(name, None)
            if change.after is None:
                deleted.setdefault(change.name, []).append(change.key)
            else:
                record_rows.append(
                    RecordRow(
                        kind=change.name,
                        key=change.key,
                        values=change.after,
                        provenance=provenance,
                        created_revision=rev_id if before is None else before.created_revision,
                        updated_revision=rev_id,
                    )
                )
        else:
            relations[change.name] = relations.get(change.name, 0) + 1
            from_key, _, to_key = change.key.partition("->")
            before_link = current_links.get((change.name, from_key, to_key))
            provenance = {} if before_link is None or change.change == "created" else dict(before_link.provenance)
            provenance["$link"] = stamp
            for name in change.attributes:
                if change.after is not None and name in change.after:
                    provenance[name] = stamp
                else:
                    provenance.pop(name, None)
            if change.after is None:
                deleted_links.setdefault(change.name, []).append((from_key, to_key))
            else:
                link_rows.append(LinkRow(change.name, from_key, to_key, change.after, provenance, rev_id))
        history_rows.append(
            HistoryRow(
                entity=change.entity,
                name=change.name,
                key=change.key,
                change=change.change,
                attributes=change.attributes,
                before=change.before,
                after=change.after,
                provenance=provenance,
            )
        )
    stats = {"partitions_changed": len(kinds) + len(relations), "changes": len(changes)}
    revision = RevisionRow(
        id=rev_id, branch=branch, generation=generation, parents=parents, author=author, message=message,
        origin=origin.document(), stats=stats, created_at=at,
    )
    await txn.insert_revision(domain_id, revision, digest)
    await txn.upsert_records(domain_id, branch, record_rows)
    for kind, doomed in deleted.items():
        await txn.delete_records(domain_id, branch, kind, doomed)
    await txn.upsert_links(domain_id, branch, link_rows)
    for relation, pairs in deleted_links.items():
        await txn.delete_links(domain_id, branch, relation, pairs)
    await txn.insert_history(domain_id, branch, generation, rev_id, history_rows)
    total_keys = sum(len(v) for v in keys.values())
    truncated = total_keys > changed_keys_max
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
        "schema_changed": False,
        "keys": keys,
        "keys_truncated": truncated,
    }
    events: list[tuple[str, str | None, dict[str, Any]]] = [("revision.committed", rev_id, event)]
    for type_, doc in extra_events or []:
        events.append((type_, rev_id, {**doc, "head": rev_id, "revisions": [rev_id]}))
    await txn.insert_events(domain_id, branch, events, at)
    return Committed(revision, changes)


class Committer:
    """Groups the commits of each branch into shared transactions (keeper.commit.max_group)."""

    def __init__(self, db: Database, *, max_group: int) -> None:
        self.db = db
        self.max_group = max(1, max_group)
        self._queues: dict[tuple[int, str], list[_Pending[Any]]] = {}
        self._draining: set[tuple[int, str]] = set()

    async def run(
        self, domain_id: int, branch: str, work: Callable[[Txn, BranchRow, Head], Awaitable[tuple[T, Head]]]
    ) -> T:
        """Run `work(txn, branch_row, head)` in a commit transaction of `branch`; it returns (result, new head)."""
        pending: _Pending[T] = _Pending(work)
        key = (domain_id, branch)
        self._queues.setdefault(key, []).append(pending)
        if key not in self._draining:
            self._draining.add(key)
            asyncio.get_running_loop().create_task(self._drain(key))
        return await pending.future

    async def _drain(self, key: tuple[int, str]) -> None:
        try:
            while self._queues.get(key):
                queue = self._queues[key]
                batch, self._queues[key] = queue[: self.max_group], queue[self.max_group :]
                await self._commit(key, batch)
        finally:
            self._draining.discard(key)
            if not self._queues.get(key):
                self._queues.pop(key, None)

    async def _commit(self, key: tuple[int, str], batch: list[_Pending[Any]]) -> None:
        try:
            outcomes = await self.db.run_interaction("commit", _commit_group, key, batch)
        except Exception as exc:  # the transaction itself failed: try each on its own
            if len(batch) > 1:
                for pending in batch:
                    await self._commit(key, [pending])
                return
            if not batch[0].future.done():
                batch[0].future.set_exception(exc)
            return
        for pending, result, error in outcomes:
            if pending.future.done():
                continue
            if error is not None:
                pending.future.set_exception(error)
            else:
                pending.future.set_result(result)


async def _commit_group(
    txn: Txn, key: tuple[int, str], batch: list[_Pending[Any]]
) -> list[tuple[_Pending[Any], Any, BaseException | None]]:
    domain_id, branch_name = key
    branch = await txn.get_branch(domain_id, branch_name, for_update=True)
    if branch is None:
        problem = Problem(404, "not-found", f"unknown branch {branch_name!r}")
        return [(pending, None, problem) for pending in batch]
    head = Head(branch.head, branch.generation)
    outcomes: list[tuple[_Pending[Any], Any, BaseException | None]] = []
    for pending in batch:
        try:
            async with txn.savepoint():
                result, new_head = await pending.work(txn, replace(branch, head=head.revision, generation=head.generation), head)
        except Problem as problem:
            outcomes.append((pending, None, problem))
            continue
        head = new_head
        outcomes.append((pending, result, None))
    if head.revision != branch.head:
        await txn.move_head(domain_id, branch_name, head.revision or "", head.generation)
    return outcomes


__all__ = ["Committed", "Committer", "Head", "Origin", "changes_digest", "revision_id", "write_commit"]
