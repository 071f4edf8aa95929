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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lorebase.problems import Problem

if TYPE_CHECKING:
    from lorebase.contract.memory.journal import JournalPosition

CONTRACT_VERSIONS = (1, 2)
MAX_SEQUENCE = 2**64 - 1  # the contract's unsigned 64-bit sequence


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


def parse_cursor(position: JournalPosition | None, path: str, contract_version: int) -> JournalCursor | None:
    """The cursor of a request (null: the start of the journal); its shape is checked by its model
    (lorebase.contract.memory.journal), its version here: 400 for a version 2 request without
    `prefix_digest`. A version 1 cursor is sequence-only (a prefix digest in it is not used)."""
    if position is None:
        return None
    if contract_version < 2:
        return JournalCursor(position.journal_id, int(position.sequence), None)
    if position.prefix_digest is None:
        raise Problem(
            400,
            "invalid-cursor",
            f"{path}: contract_version 2 needs a prefix-anchored cursor (with prefix_digest); "
            "start with after: null or keep contract_version 1",
            parameter=path,
        )
    return JournalCursor(position.journal_id, int(position.sequence), position.prefix_digest)


__all__ = [
    "CONTRACT_VERSIONS",
    "MAX_SEQUENCE",
    "JournalCursor",
    "chain_digest",
    "cursor_document",
    "genesis_digest",
    "parse_cursor",
]
