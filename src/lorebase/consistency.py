"""What a read asks of consistency, carried from the gateway to keeper so that the storage layer can
decide whether a PostgreSQL standby may answer it (lorebase_store.standbys).

DESIGN.md's rule: a plain read is as fresh as the head when it is served; a cache or replica that
could serve an older state does so only when the client opts in, and never older than a Revision
the client names as already seen. A request says three things that bear on it:

- `at`: the Revision it reads, as a full id (64 hex digits). The same read at the same Revision
  answers the same bytes on any replica, so any standby that has replayed that Revision may answer.
- the Revision it has seen: `Lorebase-Min-Revision`, else the Revision of an ETag it sends back in
  `If-None-Match` (`"<revision>.<digest>"`). Alone this does not opt into staleness (the read stays
  as fresh as the primary's head); with the opt-in below it is the floor the answer may not go under.
- `Cache-Control: max-stale=N`: the opt-in into an answer up to N seconds old, exactly as the
  gateway's read cache reads it (lorebase_gateway.read_cache).

The gateway puts them in gRPC metadata (`call_metadata`); keeper's RPC interceptor puts them in
`ASK` for the call (lorebase.metrics), where the storage layer reads them. A call without
metadata (feed's and scribe's calls, the CLI over gRPC) asks for nothing: the primary answers it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass

READ_AT_METADATA = "lorebase-read-at"
MIN_REVISION_METADATA = "lorebase-min-revision"
MAX_STALE_METADATA = "lorebase-max-stale"
_REVISION_ID = re.compile(r"[0-9a-f]{64}")
_ETAG_REVISION = re.compile(r'\s*(?:W/)?"([0-9a-f]{64})\.')


@dataclass(frozen=True, slots=True)
class ReadAsk:
    """What one read accepts: the Revision it reads (`at`), the Revision it has seen (`seen`), and
    the staleness it opted into (`max_stale_s`, None: none)."""

    at: str | None = None
    seen: str | None = None
    max_stale_s: float | None = None

    @property
    def plain(self) -> bool:
        """Nothing asked beyond a plain read: only the primary answers it."""
        return self.at is None and self.max_stale_s is None

    def metadata(self) -> tuple[tuple[str, str], ...]:
        items: tuple[tuple[str, str], ...] = ()
        if self.at is not None:
            items += ((READ_AT_METADATA, self.at),)
        if self.seen is not None:
            items += ((MIN_REVISION_METADATA, self.seen),)
        if self.max_stale_s is not None:
            items += ((MAX_STALE_METADATA, f"{self.max_stale_s:g}"),)
        return items


PLAIN = ReadAsk()
# The ask of the call being served (keeper) or of the request being routed (gateway).
ASK: ContextVar[ReadAsk] = ContextVar("lorebase_read_ask", default=PLAIN)


def revision_id(value: str | None) -> str | None:
    """`value` when it is a full Revision id, else None (a prefix or a tag names nothing certain)."""
    if value is None:
        return None
    value = value.strip().lower()
    return value if _REVISION_ID.fullmatch(value) else None


def etag_revision(if_none_match: str | None) -> str | None:
    """The Revision of the first ETag of Lorebase's form in an If-None-Match header."""
    for tag in (if_none_match or "").split(","):
        found = _ETAG_REVISION.match(tag)
        if found:
            return found.group(1)
    return None


def ask_of(
    *, at: str | None, min_revision: str | None, if_none_match: str | None, max_stale_s: float | None
) -> ReadAsk:
    """The ask of a request from its parameters and headers (already checked by the gateway)."""
    seen = revision_id(min_revision) or etag_revision(if_none_match)
    return ReadAsk(revision_id(at), seen, max_stale_s)


def from_metadata(metadata: Iterable[tuple[str, str | bytes]] | None) -> ReadAsk:
    """The ask a gRPC call carries (PLAIN without any); malformed values ask for nothing."""
    at = seen = None
    stale: float | None = None
    for key, value in metadata or ():
        if key == READ_AT_METADATA:
            at = revision_id(str(value))
        elif key == MIN_REVISION_METADATA:
            seen = revision_id(str(value))
        elif key == MAX_STALE_METADATA:
            try:
                stale = max(0.0, float(value))
            except ValueError:
                stale = None
    if at is None and seen is None and stale is None:
        return PLAIN
    return ReadAsk(at, seen, stale)


__all__ = [
    "ASK",
    "MAX_STALE_METADATA",
    "MIN_REVISION_METADATA",
    "PLAIN",
    "READ_AT_METADATA",
    "ReadAsk",
    "ask_of",
    "etag_revision",
    "from_metadata",
    "revision_id",
]
