"""One hand-written async client per service (gateway, CLI and Herald use these, never raw stubs)."""

from lorebase.clients._channel import ClientSettings
from lorebase.clients.calls import Answer
from lorebase.clients.feed import EventStream, FeedClient
from lorebase.clients.keeper import KeeperClient
from lorebase.clients.memory import MemoryJournalClient, MemoryStoreClient
from lorebase.clients.scribe import ScribeClient

__all__ = [
    "Answer",
    "ClientSettings",
    "EventStream",
    "FeedClient",
    "KeeperClient",
    "MemoryJournalClient",
    "MemoryStoreClient",
    "ScribeClient",
]
