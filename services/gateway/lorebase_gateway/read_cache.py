"""The gateway's cache of repeated reads: answers served again WITHOUT asking keeper, only to a
client that opts into bounded staleness (docs/rest.md, "Bounded staleness").

DESIGN.md's consistency rule decides its shape: a plain read is as fresh as the head when it is
served, so a plain read never comes from here (keeper answers it, as before). A client that accepts
an answer up to N seconds old says so with the standard request directive `Cache-Control:
max-stale=N` (RFC 9111 5.2.1.2; N is cut to `http.read_cache.max_stale_s`), and one that has seen a
Revision (its own write's `Lorebase-Revision`) names it in `Lorebase-Min-Revision`: an entry is then
served only when the gateway KNOWS it describes that Revision or a later head of the same branch.
Revision ids carry no order; a branch's generation does (it grows by one with every head move, each
new head a child of the one before), and keeper reports it with each Record read at the head, with
the branch's lineage (Domain, name and creation: a branch made again under its name starts over),
in a reply header the gateway keeps to itself (READ_ORDER_HEADER). From those answers the gateway
learns, per (Revision, lineage), a generation the Revision does not exceed: exactly, for the
Revision an answer describes; as an upper bound, for the Revision a request named when keeper
answered it at a later head (the client saw it before asking: trusted for that credential only). Where nothing is known, or the
entry's own place is unknown (reads keeper does not place), only the very Revision is served;
otherwise keeper answers, at the head, and its answer replaces the entry. A hit is never older than
what the client named.

An entry is keyed by the request's path and query string, its `Accept`, and a SHA-256 digest of its
credential (the `Authorization` header, which the web app's session cookie has become at the edge,
lorebase_gateway.web_session): two credentials never share an entry, so a value masked for one never
reaches another, and the token itself is never kept. It lives at most min(max-stale asked,
`http.read_cache.max_stale_s`, `keeper.auth.authz.grants_cache_ttl_s`), counted from when the
request left for keeper: a key revoked or a grant deleted through another process stops the hits
within the TTL keeper itself promises; one revoked through this gateway stops them at once (an
administrative write clears the cache, lorebase_gateway.routes). A schema change job commits
outside any request: keeper names its Revision in a reply header of a job read
(lorebase.contract.endpoint.COMMITTED_HEADER), and the first such answer clears the cache too. A request that names a session
(`Lorebase-Session`) always goes to keeper, where the call becomes a step of the session's trace.

Only 200 answers of the endpoints declared `read_cache` (lorebase.contract) are kept, at most
`max_entries` of them (least recently used dropped first) and none over `max_entry_bytes`. A hit is
answered by `CachedReads`, a plain ASGI layer in front of Starlette's routing, with `Age`,
`Lorebase-Cache: hit` and the cached `Lorebase-Revision` and ETag; what it cannot read (a bad
directive, a malformed Revision id) it leaves to the route, which answers 400 saying what to change.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from lorebase.problems import Problem

MIN_REVISION = "Lorebase-Min-Revision"
CACHE_STATUS = "Lorebase-Cache"  # hit | miss, on the answers of a request that opted in
_REVISION_ID = re.compile(r"[0-9a-f]{64}")
_SECONDS = re.compile(r"[0-9]{1,12}")
_COMMITTED_KEPT = 1024  # Revisions committed elsewhere whose clearing is remembered

# Raw header names, as the ASGI scope has them (lower case).
_CACHE_CONTROL = b"cache-control"
_MIN_REVISION = b"lorebase-min-revision"
_AUTHORIZATION = b"authorization"
_ACCEPT = b"accept"
_SESSION = b"lorebase-session"
_IF_NONE_MATCH = b"if-none-match"


@dataclass(frozen=True, slots=True)
class Ask:
    """What a request that opted in accepts: an answer at most `max_stale_s` old, describing
    `min_revision` when it names one."""

    max_stale_s: float
    min_revision: str | None


def max_stale(cache_control: str, cap: float) -> float | None:
    """The staleness a Cache-Control request header accepts, cut to `cap`; None: it does not opt in
    (no max-stale, or no-cache, which asks for a fresh answer). 400 for a max-stale that is not
    whole seconds. Other directives are ignored, as RFC 9111 says of those a cache does not use."""
    accepted: float | None = None
    for part in cache_control.split(","):
        name, equals, value = part.strip().partition("=")
        name = name.strip().lower()
        if name == "no-cache":
            return None
        if name != "max-stale":
            continue
        value = value.strip().strip('"')
        if equals and _SECONDS.fullmatch(value) is None:
            raise Problem(
                400,
                "invalid-cache-control",
                f"Cache-Control: max-stale takes whole seconds (max-stale=30), not {value[:40]!r}",
            )
        accepted = min(float(value), cap) if equals else cap
    return accepted


def min_revision(value: str | None) -> str | None:
    """The Revision a request names as already seen; 400 for anything but a full Revision id."""
    if value is None:
        return None
    value = value.strip()
    if _REVISION_ID.fullmatch(value) is None:
        raise Problem(
            400,
            "invalid-min-revision",
            f"{MIN_REVISION} is a full Revision id (64 lowercase hex digits, as Lorebase-Revision "
            f"answers it), not {value[:80]!r}",
        )
    return value


@dataclass(slots=True)
class Entry:
    """One kept answer: what a hit sends, the Revision it describes, when the request that made it
    left for keeper (monotonic seconds), until when it may be served, and the route that made it
    (so that a hit is counted under its template, lorebase_gateway.observe)."""

    body: bytes
    headers: list[tuple[bytes, bytes]]  # the answer's, without content-length (content-type, revision, ETag)
    etag: str | None
    revision: str
    order: tuple[str, int] | None  # (lineage, generation) of its Revision, when keeper said it
    made: float
    until: float
    route: Any


@dataclass(frozen=True, slots=True)
class Looked:
    """A request as the cache reads it: its key (None: not cacheable, e.g. it names a session), what
    it asks (None: a plain read) and the ETags of its If-None-Match."""

    key: tuple[str, bytes, bytes, bytes] | None
    ask: Ask | None
    if_none_match: str


class ReadCache:
    """The entries of one gateway process (see the module docstring)."""

    def __init__(self, *, max_stale_s: float, ttl_s: float, max_entries: int, max_entry_bytes: int) -> None:
        self.max_stale_s = max_stale_s
        self.lifetime_s = min(max_stale_s, ttl_s)  # the longest an entry lives, whatever is asked
        self.max_entries = max_entries
        self.max_entry_bytes = max_entry_bytes
        self._entries: OrderedDict[tuple[str, bytes, bytes, bytes], Entry] = OrderedDict()
        # (Revision, lineage, whose) -> a generation that Revision is known not to exceed on that
        # branch. whose: b"" for what keeper said of an answer's own Revision (true for everyone);
        # a credential's digest for what its own request implied (trusted for that credential only).
        self._bounds: OrderedDict[tuple[str, str, bytes], int] = OrderedDict()
        self._committed: OrderedDict[str, None] = OrderedDict()  # the last Revisions committed() named
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.lifetime_s > 0

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, scope: Scope, *, strict: bool) -> Looked:
        """The request's key and ask, from its raw headers in one pass. `strict`: a bad directive or
        Revision id raises its 400 (the route); else the request reads as not opting in (the ASGI
        layer, which leaves it to the route)."""
        cache_control = revision = None
        credential = accept = b""
        session = False
        if_none_match = ""
        for name, value in scope["headers"]:
            if name == _CACHE_CONTROL:
                cache_control = value if cache_control is None else cache_control + b"," + value
            elif name == _AUTHORIZATION:
                credential = credential or value
            elif name == _MIN_REVISION:
                revision = value
            elif name == _ACCEPT:
                accept = value
            elif name == _SESSION:
                session = True
            elif name == _IF_NONE_MATCH:
                if_none_match = value.decode("latin-1")
        try:
            named = min_revision(None if revision is None else revision.decode("latin-1"))
            stale = (
                None
                if cache_control is None
                else max_stale(cache_control.decode("latin-1"), self.max_stale_s)
            )
        except Problem:
            if strict:
                raise
            return Looked(None, None, "")
        if stale is None:  # a plain read: nothing to look up or keep
            return Looked(None, None, if_none_match)
        ask = Ask(stale, named)
        if session or not credential:  # a step of a session's trace, or a 401 to come: keeper answers
            return Looked(None, ask, if_none_match)
        key = (scope["path"], scope["query_string"], accept, hashlib.sha256(credential).digest())
        return Looked(key, ask, if_none_match)

    def get(self, looked: Looked, now: float) -> tuple[Entry, float] | None:
        """The entry a request that opted in may be answered with, and its age; None: a miss."""
        if looked.key is None or looked.ask is None:
            return None
        entry = self._entries.get(looked.key)
        if entry is None:
            self.misses += 1
            return None
        age = now - entry.made
        if now >= entry.until:
            del self._entries[looked.key]
            self.misses += 1
            return None
        if age > looked.ask.max_stale_s or not self._covers(entry, looked.ask.min_revision, looked.key[3]):
            self.misses += 1
            return None
        self._entries.move_to_end(looked.key)
        self.hits += 1
        return entry, age

    def _covers(self, entry: Entry, named: str | None, whose: bytes) -> bool:
        """Whether the entry's Revision is the named one or, as far as this gateway KNOWS, a later
        head of the same branch (its lineage, at a generation no lower than the named one's)."""
        if named is None or named == entry.revision:
            return True
        if entry.order is None:
            return False
        lineage, generation = entry.order
        bound = self._bounds.get((named, lineage, b""))
        if bound is None:
            bound = self._bounds.get((named, lineage, whose))
        return bound is not None and bound <= generation

    def _learn(self, revision: str, lineage: str, generation: int, whose: bytes = b"") -> None:
        key = (revision, lineage, whose)
        known = self._bounds.get(key)
        self._bounds[key] = generation if known is None else min(known, generation)
        self._bounds.move_to_end(key)
        while len(self._bounds) > 4 * self.max_entries:
            self._bounds.popitem(last=False)

    def put(
        self,
        looked: Looked,
        *,
        body: bytes,
        headers: list[tuple[bytes, bytes]],
        etag: str | None,
        revision: str,
        order: str | None,
        made: float,
        route: Any,
    ) -> None:
        """Keep an answer of a request that opted in (made: when it left for keeper). An entry made
        later is never replaced by one made earlier (answers can arrive out of order).

        `order` is where keeper said the answer's Revision stands on its branch ("<lineage>.<generation>",
        lorebase.contract.endpoint.READ_ORDER_HEADER; only a read of the head now says it). It
        teaches two facts: that Revision's generation; and, when the request named an earlier
        Revision, that the named one is at most that generation (the client saw it before asking,
        and a branch's head only moves on to children), so a later read naming it may be answered
        with this entry or a later one. The second rests on the client's word that it had seen the
        Revision, so it serves that credential's requests only."""
        if looked.key is None or looked.ask is None or not self.enabled or not revision:
            return
        place = _order(order)
        if place is not None:
            self._learn(revision, *place)
            named = looked.ask.min_revision
            if named is not None and named != revision:
                self._learn(named, *place, looked.key[3])
        if len(body) > self.max_entry_bytes:
            return
        kept = self._entries.get(looked.key)
        if kept is not None and kept.made > made:
            return
        entry = Entry(body, headers, etag, revision, place, made, made + self.lifetime_s, route)
        self._entries[looked.key] = entry
        self._entries.move_to_end(looked.key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry (an administrative write went through this gateway: a key revoked, a
        grant changed, an erasure)."""
        self._entries.clear()

    def committed(self, revisions: list[str]) -> None:
        """Keeper named Revisions committed outside any request through this gateway (a schema
        change job's, lorebase.contract.endpoint.COMMITTED_HEADER): drop every entry the first time
        it names one, as the change set's synchronous answer would have."""
        new = [r for r in revisions if r not in self._committed]
        for revision in new:
            self._committed[revision] = None
        while len(self._committed) > _COMMITTED_KEPT:
            self._committed.popitem(last=False)
        if new:
            self.clear()


def _order(value: str | None) -> tuple[str, int] | None:
    """(lineage, generation) of keeper's read-order header; None when absent or unreadable."""
    if not value:
        return None
    lineage, _, generation = value.rpartition(".")
    return (lineage, int(generation)) if lineage and generation.isdigit() else None


def now() -> float:
    return time.monotonic()


class CachedReads:
    """The hit path: a GET that opted in and finds its entry is answered here, before Starlette's
    routing and the route's parsing (its cost per request is the point of the cache); everything
    else goes on to the app. Inside SessionCookies, so a cookie has become the Authorization header,
    and inside the request observer, so hits carry a request id and are counted under their route."""

    def __init__(self, app: ASGIApp, cache: ReadCache | None) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cache = self.cache
        if cache is not None and scope["type"] == "http" and scope["method"] == "GET" and len(cache):
            looked = cache.read(scope, strict=False)
            found = cache.get(looked, now())
            if found is not None:
                entry, age = found
                scope["route"] = entry.route
                await _answer(entry, age, looked.if_none_match, send)
                return
        await self.app(scope, receive, send)


async def _answer(entry: Entry, age: float, if_none_match: str, send: Send) -> None:
    headers = [*entry.headers, (b"age", b"%d" % int(age)), (b"lorebase-cache", b"hit")]
    if (
        entry.etag is not None
        and if_none_match
        and entry.etag in [t.strip() for t in if_none_match.split(",")]
    ):
        await send({"type": "http.response.start", "status": 304, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    headers.append((b"content-length", b"%d" % len(entry.body)))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": entry.body})


__all__ = [
    "CACHE_STATUS",
    "MIN_REVISION",
    "Ask",
    "CachedReads",
    "Entry",
    "Looked",
    "ReadCache",
    "max_stale",
    "min_revision",
    "now",
]
