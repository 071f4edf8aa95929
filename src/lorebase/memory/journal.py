"""Journal cursors and digests, shared by keeper (which appends entries) and feed (which reads them).

A cursor is a JSON object naming a position in one journal: `{"journal_id", "sequence"}` in
contract_version 1, plus `prefix_digest` in contract_version 2. The prefix digest is the hash chain
over the journal's entries up to and including that sequence:

    genesis  = sha256("lorebase.memory.journal\\0" + journal_id)
    chain(n) = sha256(chain(n-1) + ":" + n + ":" + change_digest(n))

so a cursor issued before a restore from an older backup no longer matches once different writes
have reused its sequence numbers. The server keeps no pagination state: a cursor is checked
against the journal of the namespace the credential and scope name on every request.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from lorebase.problems import Problem

CONTRACT_VERSIONS = (1, 2)
MAX_SEQUENCE = 2**64 - 1  # the contract's unsigned 64-bit sequence
JOURNAL_ID = re.compile(r"jrn_[A-Za-z0-9]{8,64}")
DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class JournalCursor:
    journal_id: str
    sequence: int
    prefix_digest: str | None = None


def genesis_digest(journal_id: str) -> str:
    return hashlib.sha256(b"lorebase.memory.journal\0" + journal_id.encode()).hexdigest()


def chain_digest(previous: str, sequence: int, change_digest: str) -> str:
    return hashlib.sha256(f"{previous}:{sequence}:{change_digest}".encode()).hexdigest()


def cursor_document(
    journal_id: str, sequence: int, chain: str | None, contract_version: int
) -> dict[str, Any]:
    document: dict[str, Any] = {"journal_id": journal_id, "sequence": sequence}
    if contract_version >= 2 and chain is not None:
        document["prefix_digest"] = chain
    return document


def _bad(path: str, message: str) -> Problem:
    return Problem(
        400,
        "invalid-cursor",
        f"{path}: {message}; pass a cursor exactly as a page returned it, or null",
        parameter=path,
    )


def parse_cursor(value: Any, path: str, contract_version: int) -> JournalCursor | None:
    """A cursor of a request (null: the start of the journal), or 400 naming what is malformed."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _bad(path, "a cursor is an object with journal_id and sequence")
    allowed = {"journal_id", "sequence", "prefix_digest"}
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _bad(path, f"{', '.join(unknown)} is not a member of a cursor")
    journal_id = value.get("journal_id")
    if not isinstance(journal_id, str) or not JOURNAL_ID.fullmatch(journal_id):
        raise _bad(path, "journal_id is not one this service issued")
    sequence = value.get("sequence")
    if isinstance(sequence, str) and sequence.isdigit() and len(sequence) <= 20:
        sequence = int(sequence)
    if not isinstance(sequence, int) or isinstance(sequence, bool) or not 0 <= sequence <= MAX_SEQUENCE:
        raise _bad(path, "sequence is an unsigned 64-bit integer")
    digest = value.get("prefix_digest")
    if digest is not None and (not isinstance(digest, str) or not DIGEST.fullmatch(digest)):
        raise _bad(path, "prefix_digest is 64 lower-case hex digits")
    if contract_version >= 2:
        if digest is None:
            raise _bad(
                path,
                "contract_version 2 needs a prefix-anchored cursor (with prefix_digest); "
                "start with after: null or keep contract_version 1",
            )
        return JournalCursor(journal_id, sequence, digest)
    return JournalCursor(journal_id, sequence, None)  # version 1 is sequence-only


__all__ = [
    "CONTRACT_VERSIONS",
    "MAX_SEQUENCE",
    "JournalCursor",
    "chain_digest",
    "cursor_document",
    "genesis_digest",
    "parse_cursor",
]
