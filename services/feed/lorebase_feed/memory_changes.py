"""POST /api/v1/memory/changes: pages of one namespace's memory change journal (docs/memory.md).

A page reads the caller's capabilities, the journal row and its entries in one statement, so in one
snapshot (and one round trip, outside a transaction). Keeper assigns
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
from lorebase.memory.access import MemoryCaller, forbidden
from lorebase.problems import Problem
from lorebase_store import Database, JournalEntryRow, JournalPage, JournalRow, Txn

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
    _check_place(journal, cursor, path)
    assert journal is not None
    if version >= 2:
        _check_history(cursor, path, await prefix_at(txn, journal, cursor.sequence))


def _check_place(journal: JournalRow | None, cursor: JournalCursor, path: str) -> None:
    """409 for a cursor of another journal, or ahead of it."""
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


def _check_history(cursor: JournalCursor, path: str, expected: str) -> None:
    """409 for a version 2 cursor whose prefix digest is not the journal's at its sequence."""
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


_BIGINT = 2**63 - 1  # a cursor past it is ahead of every journal: 409 once the journal is read


async def _read_page(txn: Txn, caller: MemoryCaller, request: PageRequest) -> JournalPage:
    scope = request.namespace.scope
    return await txn.memory_changes_page(
        request.namespace.key,
        (caller.id, caller.tenant),
        (scope.project_id, scope.mission_id, scope.agent_id),
        min(request.after.sequence, _BIGINT) if request.after is not None else 0,
        min(request.through.sequence, _BIGINT) if request.through is not None else None,
        request.limit,
    )


def _page(caller: MemoryCaller, request: PageRequest, page: JournalPage) -> dict[str, Any]:
    """The page document from what one statement read (JournalPage), checked before it is sent."""
    if not caller.is_admin and "memory_read" not in page.capabilities:
        raise forbidden(caller, request.namespace.scope, "memory_read")
    version, journal, entries = request.contract_version, page.journal, list(page.entries)
    for cursor, path in ((request.after, "query.after"), (request.through, "query.through")):
        if cursor is not None:
            _check_place(journal, cursor, path)
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
    if start > 0:  # the entry at `start` came first: its chain digest is the page's prefix
        if not entries or entries[0].sequence != start:
            raise inconsistent(journal.id, f"entry {start} is missing")
        previous = entries.pop(0).chain_digest
    else:
        previous = genesis_digest(journal.id)
    if request.after is not None and version >= 2:
        _check_history(request.after, "query.after", previous)
    if len(entries) != min(request.limit, fence - start):
        raise inconsistent(journal.id, f"{len(entries)} entries between {start} and {fence}")
    for offset, entry in enumerate(entries, start=1):
        if entry.sequence != start + offset:
            raise inconsistent(journal.id, f"entry {start + offset} is missing")
        if chain_digest(previous, entry.sequence, entry.change_digest) != entry.chain_digest:
            raise inconsistent(journal.id, f"the hash chain breaks at entry {entry.sequence}")
        previous = entry.chain_digest
    if fence == start or (entries and entries[-1].sequence == fence):
        fence_digest = previous
    elif fence == 0:
        fence_digest = genesis_digest(journal.id)
    elif page.through is not None:
        fence_digest = page.through.chain_digest
    elif fence == journal.last_sequence:
        fence_digest = journal.last_chain
    else:
        raise inconsistent(journal.id, f"entry {fence} is missing")
    if request.through is not None and version >= 2:
        _check_history(request.through, "query.through", fence_digest)
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
    """A page in one statement outside a transaction (one snapshot), checked before it is sent."""
    request = parse_page(body, caller)
    page = await db.read_one("memory_changes", _read_page, caller, request)
    return _page(caller, request, page)


__all__ = ["check_cursor", "entry_document", "read_changes"]
