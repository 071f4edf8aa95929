"""Requests without a valid credential, limited per client address before they cost a lookup.

Every request with an unknown or revoked key costs Keeper (or Feed) a database lookup of its digest,
and one without a key is refused for nothing. So the gateway keeps a token bucket per client
address (`http.unauthenticated_rate_limit`: `per_second`, `burst`): each answer 401 for a credential
that authenticates nobody (missing, unknown, revoked: the problem's `credential: "refused"`) takes a
token, and once the address has none left its requests are answered `429 rate-limited` (`rate_class`
`unauthenticated`, `Retry-After`) before any service is called, unless their credential is one
that authenticated through this gateway before (a success answered to it). Clients with good keys
behind the same address (a NAT, a proxy) go on working while a flood of bad keys is refused. A 401
for a live credential refused for another reason (an API key presented where a web session is
needed) neither takes a token nor makes the gateway forget the key, and `/health` is never
refused.

The client address is the socket peer; behind a reverse proxy set `http.trusted_proxies` and the
address is taken from `X-Forwarded-For` as uvicorn does (the rightmost address that is not a
trusted proxy), never from a header sent by anyone else. An IPv6 address counts by its /64, the
block one host is usually given. The tables are bounded: `TRACKED` addresses and `KNOWN`
credential digests, the least recently seen forgotten first.
"""

from __future__ import annotations

import hashlib
import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.requests import Request

from lorebase.problems import Problem
from lorebase.rate_limits import Limit, RateLimiter

KIND = "unauthenticated"
TRACKED = 100_000  # client addresses with a bucket
KNOWN = 10_000  # digests of credentials that authenticated through this gateway


def address_of(host: str) -> str:
    """The key of a client address: itself (IPv4), its /64 (IPv6), the IPv4 of an IPv4-mapped one."""
    if ":" not in host:
        return host
    try:
        ip = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


class AddressLimits:
    def __init__(
        self, *, per_second: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        limit = Limit(
            per_second,
            max(burst, 1.0),
            "http.unauthenticated_rate_limit",
            "requests without a valid credential",
        )
        self._buckets = RateLimiter({KIND: limit}, clock=clock, tracked=TRACKED)
        self._known: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def admit(self, request: Request) -> None:
        """429 when the request's address has spent its allowance and its credential has not
        authenticated through this gateway."""
        try:
            self._buckets.check(_address(request), KIND)
        except Problem:
            digest = _digest(request)
            if digest is None or digest not in self._known:
                raise

    def observe(self, request: Request, status: int, problem: Problem | None = None) -> None:
        """After the answer: a 401 refusing the credential takes a token of the address; a success
        marks the credential as one that authenticates."""
        if status == 401:
            if problem is None or problem.extra.get("credential") != "refused":
                return
            self._buckets.spend(_address(request), KIND)
            digest = _digest(request)
            if digest is not None:
                self._known.pop(digest, None)
        elif status < 400:
            digest = _digest(request)
            if digest is None:
                return
            self._known[digest] = None
            self._known.move_to_end(digest)
            if len(self._known) > KNOWN:
                self._known.popitem(last=False)


def _address(request: Request) -> str:
    client = request.scope.get("client")
    return address_of(str(client[0])) if client else "unknown"


def _digest(request: Request) -> bytes | None:
    value = request.headers.get("authorization")
    return hashlib.sha256(value.encode("latin-1")).digest() if value else None


__all__ = ["KIND", "AddressLimits", "address_of"]
