"""`RestClient`: the REST client of the gateway, one method per route, composed of one class per
surface of docs/rest.md.
"""

from __future__ import annotations

from lorebase.clients.rest.admin import AdminCalls
from lorebase.clients.rest.branches import BranchCalls
from lorebase.clients.rest.feed import FeedCalls
from lorebase.clients.rest.memory import MemoryCalls
from lorebase.clients.rest.reads import ReadCalls
from lorebase.clients.rest.writes import WriteCalls


class RestClient(AdminCalls, BranchCalls, WriteCalls, ReadCalls, FeedCalls, MemoryCalls):
    """Async client of the gateway's REST API. Keyword-only arguments; `Problem` on failure."""


__all__ = ["RestClient"]
