"""One hand-written async client per service (gateway, CLI and Herald use these, never raw stubs).

The gRPC clients are imported on first use (PEP 562), so that `lorebase.clients.rest`, the REST
client, imports without grpc and protobuf: Herald's light distribution (clients/herald) ships it
without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorebase.clients._channel import ClientSettings
    from lorebase.clients.calls import Answer
    from lorebase.clients.feed import EventStream, FeedClient
    from lorebase.clients.keeper import KeeperClient
    from lorebase.clients.memory import MemoryJournalClient, MemoryStoreClient
    from lorebase.clients.scribe import ScribeClient

_MODULES = {
    "Answer": "calls",
    "ClientSettings": "_channel",
    "EventStream": "feed",
    "FeedClient": "feed",
    "KeeperClient": "keeper",
    "MemoryJournalClient": "memory",
    "MemoryStoreClient": "memory",
    "ScribeClient": "scribe",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'lorebase.clients' has no attribute {name!r}")
    return getattr(importlib.import_module(f"lorebase.clients.{module}"), name)


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
