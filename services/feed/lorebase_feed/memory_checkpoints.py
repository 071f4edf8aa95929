"""Consumer checkpoints: a subject's saved cursor per consumer name, monotonic and revision-checked.

A checkpoint belongs to the principal that saves it (its tenant and id) and to one scope's journal.
Saving needs memory_read and memory_checkpoint on that scope; `revision` is the revision the caller
last read (0 to create). An older cursor than the saved one, or a revision that moved meanwhile
(a concurrent update), is 409. Checkpoints create no journal entries.
"""

from __future__ import annotations

import re
from typing import Any

from lorebase.ids import iso, utc_now
from lorebase.memory import Scope, cursor_document, parse_cursor, parse_scope
from lorebase.memory.access import MemoryCaller, require
from lorebase.problems import Problem
from lorebase_feed.memory_changes import check_cursor, contract_version
from lorebase_store import CheckpointRow, Database, Txn

CONSUMER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


def _consumer(consumer: str) -> str:
    if not CONSUMER.match(consumer):
        raise Problem(
            400,
            "invalid-parameter",
            "the consumer name is 1-128 letters, digits or ._:- (starting alphanumeric)",
            parameter="consumer",
        )
    return consumer


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
    db: Database, caller: MemoryCaller, consumer: str, body: dict[str, Any]
) -> dict[str, Any]:
    _consumer(consumer)
    unknown = sorted(set(body) - {"contract_version", "scope", "cursor", "revision"})
    if unknown:
        raise Problem(
            400, "invalid-parameter", f"{unknown[0]} is not a member of a checkpoint", parameter=unknown[0]
        )
    version = contract_version(body)
    scope = parse_scope(body.get("scope"))
    cursor = parse_cursor(body.get("cursor"), "cursor", version)
    if cursor is None:
        raise Problem(
            400, "invalid-cursor", "cursor is required: a cursor a changes page returned", parameter="cursor"
        )
    expected = body.get("revision")
    if not isinstance(expected, int) or isinstance(expected, bool) or expected < 0:
        raise Problem(
            400,
            "invalid-parameter",
            "revision is the checkpoint revision you last read (0 to create it)",
            parameter="revision",
        )
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


async def get_checkpoint(db: Database, caller: MemoryCaller, consumer: str) -> dict[str, Any]:
    _consumer(consumer)

    async def read(txn: Txn) -> CheckpointRow:
        row = await txn.get_memory_checkpoint(caller.tenant, caller.id, consumer)
        if row is None:
            raise Problem(404, "not-found", f"you have no checkpoint {consumer!r}; save one with PUT first")
        s = row.scope
        await require(
            txn,
            caller,
            Scope(s["project_id"], s["mission_id"], s["agent_id"], s["visibility"]),
            "memory_read",
            "memory_checkpoint",
        )
        return row

    return _document(await db.read("memory_checkpoint_get", read))


__all__ = ["get_checkpoint", "save_checkpoint"]
