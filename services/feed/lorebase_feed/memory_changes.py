"""POST /api/v1/memory/changes: pages of one namespace's memory change journal (docs/memory.md).

A page reads the journal row and its entries in one REPEATABLE READ snapshot. Keeper assigns
sequences under a row lock on the journal, so the journal's `last_sequence` in that snapshot is a
fence no in-flight transaction can fill below: every entry up to it is committed and visible.
Each page is checked before it is sent (contiguous sequences, the hash chain of every entry); a
detected inconsistency is a 500 with no partial page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lorebase.contract.memory.journal import ChangesBody
from lorebase.memory import (
    JournalCursor,
    Namespace,
    Scope,
    chain_digest,
    cursor_document,
    genesis_digest,
    parse_cursor,
)
from lorebase.memory.access import MemoryCaller, require
from lorebase.problems import Problem
from lorebase_store import Database, JournalEntryRow, JournalRow, Txn

RECONCILE = (
    "reconcile: capture the current high_watermark, enumerate the scope with POST /api/v1/memory/query, "
    "then consume changes after the captured watermark (docs/memory.md)"
)


@dataclass(frozen=True)
class PageRequest:
    contract_version: int
    namespace: Namespace
    after: JournalCursor | None
    through: JournalCursor | None
    limit: int


def _bad(message: str, parameter: str) -> Problem:
    return Problem(400, "invalid-parameter", message, parameter=parameter)


def parse_page(body: ChangesBody, caller: MemoryCaller) -> PageRequest:
    """The page a decoded request asks for (its model checked the shape and bounds): 400 for a
    version 2 cursor without its prefix digest, for `after` and `through` of two journals, and for
    `after` beyond `through` (the seed)."""
    version, query = body.contract_version, body.query
    after = parse_cursor(query.after, "query.after", version)
    through = parse_cursor(query.through, "query.through", version)
    if after is not None and through is not None:
        if after.journal_id != through.journal_id:
            raise _bad(
                "query.after and query.through name different journals; pass cursors of one page run",
                "query.after",
            )
        if after.sequence > through.sequence:
            raise _bad(
                f"query.after (sequence {after.sequence}) is beyond query.through (sequence {through.sequence})",
                "query.after",
            )
    namespace = Scope.of(body.scope).namespace(caller.tenant, caller.id)
    return PageRequest(version, namespace, after, through, query.limit)


def inconsistent(journal_id: str, what: str) -> Problem:
    return Problem(
        500,
        "journal-inconsistent",
        f"the memory journal {journal_id} is inconsistent ({what}); no page is returned; an operator must check it",
        journal_id=journal_id,
    )


async def check_cursor(
    txn: Txn, journal: JournalRow | None, cursor: JournalCursor, path: str, version: int
) -> None:
    """409 for a cursor of another journal, ahead of it, or (version 2) of another history."""
    if journal is None or cursor.journal_id != journal.id:
        raise Problem(
            409,
            "cursor-journal-mismatch",
            f"{path} belongs to another namespace or journal than this scope's; do not reset it to the start: {RECONCILE}",
            parameter=path,
            reason="journal_mismatch",
        )
    if cursor.sequence > journal.last_sequence:
        raise Problem(
            409,
            "cursor-ahead",
            f"{path} (sequence {cursor.sequence}) is ahead of the journal (sequence {journal.last_sequence}), "
            f"as after a restore from an older backup; do not reset it to the start: {RECONCILE}",
            parameter=path,
            reason="ahead_of_journal",
            high_watermark=journal.last_sequence,
        )
    if version >= 2:
        expected = await prefix_at(txn, journal, cursor.sequence)
        if cursor.prefix_digest != expected:
            raise Problem(
                409,
                "cursor-diverged",
                f"{path} anchors a history the journal no longer has (a restore followed by different writes "
                f"reused sequence {cursor.sequence}); {RECONCILE}",
                parameter=path,
                reason="history_diverged",
            )


async def prefix_at(txn: Txn, journal: JournalRow, sequence: int) -> str:
    if sequence == 0:
        return genesis_digest(journal.id)
    if sequence == journal.last_sequence:
        return journal.last_chain
    entry = await txn.memory_journal_entry(journal.id, sequence)
    if entry is None:
        raise inconsistent(journal.id, f"entry {sequence} is missing")
    return entry.chain_digest


def entry_document(entry: JournalEntryRow, version: int) -> dict[str, Any]:
    return {
        "schema_version": entry.schema_version,
        "cursor": cursor_document(entry.journal_id, entry.sequence, entry.chain_digest, version),
        "kind": entry.kind,
        "record_id": entry.record_id,
        "record_revision": entry.record_revision,
        "author": entry.author,
        "committed_at_millis": entry.committed_at_millis,
        "change_digest": entry.change_digest,
    }


async def _page(txn: Txn, caller: MemoryCaller, request: PageRequest) -> dict[str, Any]:
    await require(txn, caller, request.namespace.scope, "memory_read")
    version = request.contract_version
    journal = await txn.memory_journal_for(request.namespace.key)
    for cursor, path in ((request.after, "query.after"), (request.through, "query.through")):
        if cursor is not None:
            await check_cursor(txn, journal, cursor, path, version)
    if journal is None:  # nothing committed in this namespace yet
        return {
            "contract_version": version,
            "journal_id": None,
            "entries": [],
            "high_watermark": None,
            "next_cursor": None,
            "complete": True,
        }
    fence = request.through.sequence if request.through is not None else journal.last_sequence
    start = request.after.sequence if request.after is not None else 0
    # The entry at `start` comes in the same statement: its chain digest is the page's prefix.
    read_from = start - 1 if 0 < start < journal.last_sequence else start
    entries = await txn.memory_journal_entries(
        journal.id, read_from, fence, request.limit + start - read_from
    )
    if read_from < start:
        if not entries or entries[0].sequence != start:
            raise inconsistent(journal.id, f"entry {start} is missing")
        previous = entries.pop(0).chain_digest
    else:
        previous = await prefix_at(txn, journal, start)
    if len(entries) != min(request.limit, fence - start):
        raise inconsistent(journal.id, f"{len(entries)} entries between {start} and {fence}")
    for offset, entry in enumerate(entries, start=1):
        if entry.sequence != start + offset:
            raise inconsistent(journal.id, f"entry {start + offset} is missing")
        if chain_digest(previous, entry.sequence, entry.change_digest) != entry.chain_digest:
            raise inconsistent(journal.id, f"the hash chain breaks at entry {entry.sequence}")
        previous = entry.chain_digest
    fence_digest = previous if (entries and entries[-1].sequence == fence) or fence == start else None
    if fence_digest is None:
        fence_digest = await prefix_at(txn, journal, fence)
    last = entries[-1].sequence if entries else start
    return {
        "contract_version": version,
        "journal_id": journal.id,
        "entries": [entry_document(entry, version) for entry in entries],
        "high_watermark": cursor_document(journal.id, fence, fence_digest, version),
        "next_cursor": cursor_document(journal.id, last, previous, version),
        "complete": last == fence,
    }


async def read_changes(db: Database, caller: MemoryCaller, body: ChangesBody) -> dict[str, Any]:
    request = parse_page(body, caller)
    return await db.read("memory_changes", _page, caller, request)


__all__ = ["check_cursor", "entry_document", "read_changes"]
