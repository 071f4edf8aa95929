"""Consumer checkpoints: a subject's saved cursor per consumer name, monotonic and revision-checked.

A checkpoint belongs to the principal that saves it (its tenant and id) and to one scope's journal.
Saving needs memory_read and memory_checkpoint on that scope; `revision` is the revision the caller
last read (0 to create). An older cursor than the saved one, or a revision that moved meanwhile
(a concurrent update), is 409. Checkpoints create no journal entries. Bodies and parameters arrive
decoded and checked (lorebase.contract.memory.journal, by the servicer).
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.memory.journal import CheckpointDeletion, CheckpointSave
from lorebase.ids import iso, utc_now
from lorebase.memory import Scope, cursor_document, parse_cursor
from lorebase.memory.access import MemoryCaller, capabilities, require
from lorebase.problems import Problem
from lorebase_feed.memory_changes import check_cursor
from lorebase_store import CheckpointRow, Database, Txn


def _document(row: CheckpointRow) -> dict[str, Any]:
    return {
        "consumer": row.consumer,
        "scope": row.scope,
        "contract_version": row.contract_version,
        "cursor": cursor_document(row.journal_id, row.sequence, row.prefix_digest, row.contract_version),
        "revision": row.revision,
        "updated_at": iso(row.updated_at),
    }


def _revision_mismatch(consumer: str, current: int, given: int) -> Problem:
    return Problem(
        409,
        "checkpoint-revision-mismatch",
        f"checkpoint {consumer!r} is at revision {current}, not {given} (another update came first); "
        "read it again and save with its current revision",
        consumer=consumer,
        revision=current,
    )


async def save_checkpoint(
    db: Database, caller: MemoryCaller, consumer: str, body: CheckpointSave
) -> dict[str, Any]:
    version, scope, expected = body.contract_version, Scope.of(body.scope), body.revision
    cursor = parse_cursor(body.cursor, "cursor", version)
    assert cursor is not None  # the model requires it
    namespace = scope.namespace(caller.tenant, caller.id)

    async def txn_fn(txn: Txn) -> CheckpointRow:
        await txn.synchronous_commit()
        await require(txn, caller, scope, "memory_read", "memory_checkpoint")
        await check_cursor(txn, await txn.memory_journal_for(namespace.key), cursor, "cursor", version)
        current = await txn.get_memory_checkpoint(caller.tenant, caller.id, consumer, for_update=True)
        row = CheckpointRow(
            consumer,
            cursor.journal_id,
            scope.document(),
            version,
            cursor.sequence,
            cursor.prefix_digest,
            (current.revision if current else 0) + 1,
            utc_now(),
        )
        if current is None:
            if expected != 0 or not await txn.insert_memory_checkpoint(caller.tenant, caller.id, row):
                raise _revision_mismatch(consumer, 0 if expected != 0 else 1, expected)
            return row
        if current.revision != expected:
            raise _revision_mismatch(consumer, current.revision, expected)
        if current.journal_id != cursor.journal_id:
            raise Problem(
                409,
                "checkpoint-journal-mismatch",
                f"checkpoint {consumer!r} follows another journal (scope {current.scope}); use another consumer name",
                consumer=consumer,
            )
        if cursor.sequence < current.sequence:
            raise Problem(
                409,
                "checkpoint-regressed",
                f"checkpoint {consumer!r} is at sequence {current.sequence}; a checkpoint only moves forward "
                f"(got {cursor.sequence})",
                consumer=consumer,
                revision=current.revision,
            )
        if not await txn.update_memory_checkpoint(caller.tenant, caller.id, row, expected):
            raise _revision_mismatch(consumer, current.revision + 1, expected)
        return row

    return _document(await db.run_interaction("memory_checkpoint_save", txn_fn))


def _scope(row: CheckpointRow) -> Scope:
    s = row.scope
    return Scope(s["project_id"], s["mission_id"], s["agent_id"], s["visibility"])


def _missing(consumer: str) -> Problem:
    return Problem(404, "not-found", f"you have no checkpoint {consumer!r}; save one with PUT first")


async def get_checkpoint(db: Database, caller: MemoryCaller, consumer: str) -> dict[str, Any]:
    async def read(txn: Txn) -> CheckpointRow:
        row = await txn.get_memory_checkpoint(caller.tenant, caller.id, consumer)
        if row is None:
            raise _missing(consumer)
        await require(txn, caller, _scope(row), "memory_read", "memory_checkpoint")
        return row

    return _document(await db.read("memory_checkpoint_get", read))


async def list_checkpoints(db: Database, caller: MemoryCaller, after: str, limit: int) -> dict[str, Any]:
    """The caller's checkpoints in consumer name order, a page of `limit` (1-256, 100) after the
    consumer name `after` ("": from the first). Checkpoints of scopes where the caller no longer
    holds memory_read and memory_checkpoint are left out (a page may hold fewer than `limit`);
    `next_after` is the name to pass as `after` for the next page, null on the last one."""

    async def read(txn: Txn) -> tuple[list[CheckpointRow], bool]:
        rows = await txn.list_memory_checkpoints(caller.tenant, caller.id, after or None, limit)
        kept = []
        for row in rows:
            held = await capabilities(txn, caller, _scope(row))
            if {"memory_read", "memory_checkpoint"} <= held:
                kept.append(row)
        return kept, len(rows) == limit

    kept, more = await db.read("memory_checkpoint_list", read)
    last = kept[-1].consumer if kept else after or None
    return {"checkpoints": [_document(row) for row in kept], "next_after": last if more else None}


async def delete_checkpoint(
    db: Database, caller: MemoryCaller, consumer: str, body: CheckpointDeletion
) -> dict[str, Any]:
    """Delete one of the caller's checkpoints (memory_read and memory_checkpoint on its scope). With
    `revision`, only at that revision (409 checkpoint-revision-mismatch otherwise)."""
    expected = body.revision

    async def txn_fn(txn: Txn) -> CheckpointRow:
        current = await txn.get_memory_checkpoint(caller.tenant, caller.id, consumer, for_update=True)
        if current is None:
            raise _missing(consumer)
        await require(txn, caller, _scope(current), "memory_read", "memory_checkpoint")
        if expected is not None and expected != current.revision:
            raise _revision_mismatch(consumer, current.revision, expected)
        if not await txn.delete_memory_checkpoint(caller.tenant, caller.id, consumer, current.revision):
            raise _missing(consumer)  # pragma: no cover - the row is locked
        return current

    row = await db.run_interaction("memory_checkpoint_delete", txn_fn)
    return {"consumer": consumer, "deleted": True, "revision": row.revision}


__all__ = ["delete_checkpoint", "get_checkpoint", "list_checkpoints", "save_checkpoint"]
