"""Caps on the event streams one gateway process holds: in all, and per principal.

`agents.feed.max_streams` bounds the streams of the process: past it a new one is refused before
Feed is asked anything. `agents.feed.max_streams_per_principal` bounds one principal's: the gateway
knows only the credential, so the principal is the one the follower's control stream names when it
opens (Feed asks Keeper, `StreamItem.principal`), and two keys of one principal share its cap. The
built-in admin principal is capped only by the process's cap, as it is not rate limited.

A refusal is `429 too-many-streams` with `Retry-After` and `cap` (`principal` or `gateway`): close a
stream you no longer read, or retry when one has ended. Each process counts its own streams: behind
N gateways a principal may hold up to N times its cap.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Protocol

from lorebase.credentials import ADMIN_PRINCIPAL  # not capped per principal
from lorebase.problems import Problem

RETRY_AFTER_S = 5


class _Held(Protocol):
    principal: str


class StreamCaps:
    def __init__(self, *, per_principal: int, total: int) -> None:
        self.per_principal = per_principal
        self.total = total
        self._held: dict[_Held, str] = {}  # stream → its principal
        self._per: Counter[str] = Counter()
        self._opening = 0

    def __len__(self) -> int:
        return len(self._held)

    def of(self, principal: str) -> int:
        """The streams `principal` holds in this process."""
        return self._per[principal]

    @contextlib.contextmanager
    def opening(self) -> Iterator[None]:
        """A slot of the process's cap while a stream opens (429 when they are all taken)."""
        if len(self._held) + self._opening >= self.total:
            raise Problem(
                429,
                "too-many-streams",
                f"this gateway holds its most event streams ({self.total}, agents.feed.max_streams); "
                f"retry after {RETRY_AFTER_S} s, or through another gateway",
                retry_after=RETRY_AFTER_S,
                cap="gateway",
            )
        self._opening += 1
        try:
            yield
        finally:
            self._opening -= 1

    def hold(self, stream: _Held) -> None:
        """Count an opened stream against its principal's cap, or refuse it with 429."""
        principal = stream.principal
        if principal != ADMIN_PRINCIPAL and self._per[principal] >= self.per_principal:
            raise Problem(
                429,
                "too-many-streams",
                f"{principal} holds {self._per[principal]} event streams through this gateway, its most "
                f"(agents.feed.max_streams_per_principal); close one it no longer reads, or retry after "
                f"{RETRY_AFTER_S} s",
                retry_after=RETRY_AFTER_S,
                cap="principal",
            )
        self._held[stream] = principal
        self._per[principal] += 1

    def release(self, stream: _Held) -> None:
        """The stream ended (a stream that was never held is ignored)."""
        principal = self._held.pop(stream, None)
        if principal is None:
            return
        self._per[principal] -= 1
        if not self._per[principal]:
            del self._per[principal]


__all__ = ["StreamCaps"]
