"""Answers of repeated reads, kept by what they describe, so that a hit is right by construction.

An entry is keyed by
- the Revision the answer describes: the branch head when it was read, or the `at` the client named;
- the caller's effective grants (`Access.grants_digest`: roles, branch patterns and Kind narrowing,
  not who the caller is), since what a read shows (which Kinds, which values are redacted) depends
  on them and on nothing else about the caller;
- the request itself (the RPC and its parameters).
Each entry also remembers the Domain object it was made with (schema and settings: the Domain
cache, lorebase_keeper.domains, replaces it when they change) and is served only with that same
object.

A plain read (no `at`) is served from an entry only after the branch's head has been looked up in
the same request and found equal to the entry's Revision: the answer is exactly what reading the
rows would answer now, as fresh as without the cache, on any replica. A read `at` a Revision needs
no such check: the state at a Revision never changes.

Entries live at most `ttl_s` (the grants and credential cache time, keeper.auth.authz.
grants_cache_ttl_s), so a revoked grant stops hits within the time the docs promise even for a
caller whose Access object is still cached; at most `max_entries` are kept (the oldest go first).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain


class ReadCache:
    """A bounded map from (Revision, grants digest, request) to a read's answer document."""

    def __init__(self, *, max_entries: int, ttl_s: float) -> None:
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[Hashable, tuple[float, Domain, Any]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.ttl_s > 0

    @staticmethod
    def key(domain: Domain, branch: str, revision: str | None, access: Access, request: Hashable) -> Hashable:
        return (domain.id, branch, revision, access.grants_digest, request)

    def get(self, key: Hashable, domain: Domain) -> Any | None:
        """The answer kept under `key`, made with this same Domain object and not expired; or None."""
        entry = self._entries.get(key)
        if entry is None or entry[1] is not domain or entry[0] < time.monotonic():
            self.misses += 1
            return None
        self.hits += 1
        return entry[2]

    def put(self, key: Hashable, domain: Domain, answer: Any) -> None:
        if not self.enabled:
            return
        entries = self._entries
        entries[key] = (time.monotonic() + self.ttl_s, domain, answer)
        entries.move_to_end(key)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)

    def forget(self) -> None:
        """Drop every entry (a grant or key changed in this process: as the Authenticator does)."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["ReadCache"]
