"""Memory commands committed in groups, one group of a journal at a time (docs/memory.md).

Every command on one namespace appends to its journal, and appends serialize on the journal's row
lock. Rather than one transaction per command, each waiting for the round trips and the WAL flush
of the one before it, the `MemoryCommitter` of a keeper process queues the commands of a journal
and runs a group of them in one transaction:

1. begin with synchronous_commit on, lock the journal row (`SELECT ... FOR UPDATE`; the journal
   is created on the first write of a namespace) and, in the same statement, read the callers' keys
   (still valid?), the receipts, records and grants the group needs (read again once the lock is
   held when the lock waited for a group that moved the journal);
3. check and plan each command in queue order (plan.py: GroupPlan): an accepted one takes the
   next sequence, a rejected one (a Problem) plans nothing;
4. write every planned row and the journal's new head in one statement, and commit: one WAL flush.

The entries of a group get consecutive sequences after the journal's head and become visible in
one commit, with the head that covers them, so the journal still commits in order and without gaps.

A create names its namespace (scope, tenant, caller). A command on a record goes to the journal of
the record's namespace, read once and remembered (a record never changes namespace).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from lorebase.ids import new_id, utc_now
from lorebase.memory import Namespace, Scope, genesis_digest
from lorebase.memory.access import MemoryCaller, caller_of_digest
from lorebase.problems import Problem
from lorebase_keeper.memory.commands import Command
from lorebase_keeper.memory.plan import GroupPlan, Misrouted
from lorebase_keeper.writes import GroupQueue, Outcome
from lorebase_store import Database, MemoryRecordRow, ReceiptTaken, Txn

logger = logging.getLogger("lorebase.keeper.memory")

NO_RECORD = ""  # the queue of commands on a record that does not exist: no journal to lock
_REMEMBERED = 100_000  # record namespaces (and key digests) kept in memory
_ATTEMPTS = 3  # runs of a group whose receipt another transaction wrote first (the next one reads it)


@dataclass
class _Pending:
    caller: MemoryCaller
    command: Command
    digest: str  # of the caller's key, checked again in the group's transaction
    namespace: Namespace | None
    future: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class MemoryCommitter:
    """Groups the memory commands of each journal into shared transactions (memory.commit.max_group)."""

    def __init__(self, db: Database, *, max_group: int) -> None:
        self.db = db
        self._groups: GroupQueue[str, _Pending] = GroupQueue(
            "memory command", self._commit, max_group=max_group, logger=logger
        )
        self._namespaces: dict[str, Namespace] = {}  # record id → its namespace
        self._callers: dict[str, MemoryCaller] = {}  # key digest → its principal and tenant

    async def caller(self, digest: str) -> MemoryCaller:
        """The principal of a key digest and its tenant (401 when unknown or revoked), to route its
        commands: both never change for a key. Whether the key is still valid is checked again by
        each command's group, in its transaction."""
        caller = self._callers.get(digest)
        if caller is None:
            caller = await caller_of_digest(self.db, digest)
            if len(self._callers) >= _REMEMBERED:
                self._callers.clear()
            self._callers[digest] = caller
        return caller

    async def run(self, caller: MemoryCaller, command: Command, digest: str) -> Outcome:
        """Run `command` in the next group of its journal; its answer, or the Problem it raised."""
        for attempt in (1, 2):
            if command.record_id is None:
                assert command.scope is not None  # create and derive name their scope
                namespace: Namespace | None = command.scope.namespace(caller.tenant, caller.id)
            else:
                namespace = await self._namespace_of(command.record_id)
            pending = _Pending(caller, command, digest, namespace)
            self._groups.put(NO_RECORD if namespace is None else namespace.key, pending)
            try:
                outcome: Outcome = await pending.future
            except Problem as problem:
                if problem.status == 401:  # the key was revoked
                    self._callers.pop(digest, None)
                raise
            except Misrouted:
                # Only a remembered namespace that the database no longer agrees with (a restore):
                # read it again and run in the right group.
                self._namespaces.pop(command.record_id or "", None)
                if attempt == 2:
                    raise
                continue
            if command.record_id is None and namespace is not None and outcome.status == 201:
                self._remember(outcome.document["record"]["record_id"], namespace)
            return outcome
        raise AssertionError("unreachable")

    def _remember(self, record_id: str, namespace: Namespace) -> None:
        if len(self._namespaces) >= _REMEMBERED:
            self._namespaces.clear()
        self._namespaces[record_id] = namespace

    async def _namespace_of(self, record_id: str) -> Namespace | None:
        namespace = self._namespaces.get(record_id)
        if namespace is None:
            row = await self.db.read_one("memory_record_namespace", _record, record_id)
            if row is None:
                return None
            scope = Scope(row.project_id, row.mission_id, row.agent_id, row.visibility)
            namespace = Namespace(row.tenant, scope, row.subject)
            self._remember(record_id, namespace)
        return namespace

    async def _commit(
        self, key: str, group: list[_Pending]
    ) -> list[tuple[_Pending, Any, BaseException | None]]:
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                return await self.db.run_interaction("memory_commands", _group_txn, group[0].namespace, group)
            except ReceiptTaken:  # an idempotency key was used in another journal at the same time
                if attempt == _ATTEMPTS:
                    raise
        raise AssertionError("unreachable")


async def _record(txn: Txn, record_id: str) -> MemoryRecordRow | None:
    return await txn.get_memory_record(record_id)


async def _group_txn(
    txn: Txn, namespace: Namespace | None, group: list[_Pending]
) -> list[tuple[_Pending, Any, BaseException | None]]:
    keys = [(p.caller.tenant, p.caller.id, p.command.key) for p in group]
    record_ids = [p.command.record_id for p in group if p.command.record_id is not None]
    record_ids += [source for p in group for source in p.command.derived_from]
    reads = (
        keys,
        sorted({p.digest for p in group}),
        record_ids,
        sorted({(p.caller.id, p.caller.tenant) for p in group}),
        None
        if namespace is None
        else (namespace.scope.project_id, namespace.scope.mission_id, namespace.scope.agent_id),
    )
    journal, state = await txn.begin_memory_group(None if namespace is None else namespace.key, *reads)
    created = False
    if journal is None and namespace is not None:  # the first write in this namespace
        scope = namespace.scope
        journal_id = new_id("jrn")
        columns = {
            "tenant": namespace.tenant,
            "project_id": scope.project_id,
            "mission_id": scope.mission_id,
            "agent_id": scope.agent_id,
            "visibility": scope.visibility,
            "subject": namespace.subject,
        }
        journal = await txn.lock_memory_journal(
            namespace.key, journal_id, genesis_digest(journal_id), columns, utc_now()
        )
        created = journal.id == journal_id
    if state is None:  # read before the lock, and the journal moved (or was made) since
        state = await txn.memory_group_state(*reads)
    plan = GroupPlan(namespace, journal, state)
    outcomes: list[tuple[_Pending, Any, BaseException | None]] = []
    for pending in group:
        try:
            outcomes.append((pending, plan.run(pending.caller, pending.command, pending.digest), None))
        except (Problem, Misrouted) as refused:
            outcomes.append((pending, None, refused))
    rows = plan.rows()
    if created and journal is not None and not rows.entries:
        await txn.delete_memory_journal(journal.id)  # nothing was written in the namespace after all
    await txn.write_memory_rows(rows)
    return outcomes


__all__ = ["MemoryCommitter"]
