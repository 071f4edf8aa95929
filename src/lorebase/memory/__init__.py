"""Agent memory pieces that keeper and feed share: scopes and namespaces, journal cursors and digests."""

from lorebase.memory.journal import (
    CONTRACT_VERSIONS,
    MAX_SEQUENCE,
    JournalCursor,
    chain_digest,
    cursor_document,
    genesis_digest,
    parse_cursor,
)
from lorebase.memory.scope import CAPABILITIES, Namespace, Scope

__all__ = [
    "CAPABILITIES",
    "CONTRACT_VERSIONS",
    "MAX_SEQUENCE",
    "JournalCursor",
    "Namespace",
    "Scope",
    "chain_digest",
    "cursor_document",
    "genesis_digest",
    "parse_cursor",
]
