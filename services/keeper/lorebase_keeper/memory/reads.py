"""Memory reads: one record by id, and the query API that enumerates the records of a scope."""

from __future__ import annotations

from typing import Any

from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.memory import parse_scope
from lorebase.memory.access import MemoryCaller, require
from lorebase.problems import Problem
from lorebase_keeper.memory.commands import now_millis, readable_record
from lorebase_keeper.memory.records import record_document
from lorebase_store import Database, Txn

MAX_PAGE = 256


async def get_record(db: Database, caller: MemoryCaller, record_id: str) -> dict[str, Any]:
    async def read(txn: Txn) -> dict[str, Any]:
        return record_document(await readable_record(txn, caller, record_id), now_millis())

    return await db.read("memory_get", read)


def _query_member(body: dict[str, Any]) -> tuple[int, str | None, bool]:
    unknown = sorted(set(body) - {"scope", "limit", "cursor", "include_unavailable"})
    if unknown:
        raise Problem(
            400, "invalid-parameter", f"{unknown[0]} is not a member of a memory query", parameter=unknown[0]
        )
    limit = body.get("limit", 100)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise Problem(400, "invalid-parameter", f"limit is 1-{MAX_PAGE}", parameter="limit")
    cursor = body.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise Problem(400, "invalid-cursor", "cursor is a string a page returned as next_cursor, or null")
    include = body.get("include_unavailable", False)
    if not isinstance(include, bool):
        raise Problem(
            400, "invalid-parameter", "include_unavailable is true or false", parameter="include_unavailable"
        )
    return limit, cursor, include


async def query_records(db: Database, caller: MemoryCaller, body: dict[str, Any]) -> dict[str, Any]:
    """The records of one namespace in id (creation) order; deleted and expired ones only on request.

    This is the scan of the new-consumer protocol (docs/memory.md): not a frozen snapshot across
    pages; the change journal after the captured watermark reconciles what moved meanwhile.
    """
    scope = parse_scope(body.get("scope"))
    limit, cursor, include = _query_member(body)
    namespace = scope.namespace(caller.tenant, caller.id)
    after_id = None
    if cursor is not None:
        value = decode_cursor(
            cursor, lambda v: isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
        )
        if value[0] != namespace.key[:16]:
            raise Problem(400, "invalid-cursor", "cursor belongs to another scope; start again without it")
        after_id = value[1]

    async def read(txn: Txn) -> dict[str, Any]:
        await require(txn, caller, scope, "memory_read")
        now = now_millis()
        rows = await txn.memory_records_page(
            namespace.key, after_id, limit + 1, include_unavailable=include, now_millis=now
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
