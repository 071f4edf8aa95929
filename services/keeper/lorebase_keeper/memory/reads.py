"""Memory reads: one record by id, and the query API that enumerates the records of a scope."""

from __future__ import annotations

from typing import Any

from lorebase.contract.memory import MemoryQueryBody
from lorebase.cursors import decode_cursor, encode_cursor, pair_of
from lorebase.memory import Scope
from lorebase.memory.access import MemoryCaller, require
from lorebase.problems import Problem
from lorebase_keeper.memory.commands import now_millis, readable_record
from lorebase_keeper.memory.records import record_document
from lorebase_store import Database, Txn


async def get_record(db: Database, caller: MemoryCaller, record_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        return record_document(await readable_record(txn, caller, record_id), now_millis())

    return await db.read("memory_get", read)


async def query_records(db: Database, caller: MemoryCaller, body: MemoryQueryBody) -> dict[str, Any]:
    """The records of one namespace in id (creation) order; deleted and expired ones only on request.

    This is the scan of the new-consumer protocol (docs/memory.md): not a frozen snapshot across
    pages; the change journal after the captured watermark reconciles what moved meanwhile.
    """
    scope = Scope.of(body.scope)
    limit = body.limit
    namespace = scope.namespace(caller.tenant, caller.id)
    after_id = None
    if body.cursor is not None:
        value = decode_cursor(body.cursor, pair_of(str))
        if value[0] != namespace.key[:16]:
            raise Problem(400, "invalid-cursor", "cursor belongs to another scope; start again without it")
        after_id = value[1]

    async def read(txn: Txn) -> dict[str, Any]:
        await require(txn, caller, scope, "memory_read")
        now = now_millis()
        rows = await txn.memory_records_page(
            namespace.key, after_id, limit + 1, include_unavailable=body.include_unavailable, now_millis=now
        )
        page = rows[:limit]
        next_cursor = encode_cursor([namespace.key[:16], page[-1].id]) if len(rows) > limit else None
        return {
            "scope": scope.document(),
            "records": [record_document(row, now) for row in page],
            "next_cursor": next_cursor,
        }

    return await db.read("memory_query", read)


__all__ = ["get_record", "query_records"]
