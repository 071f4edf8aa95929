"""No body of an unknown credential is read past a few KiB.

A request body is read and parsed before its service is called (lorebase_gateway.edge), and an
import may be 256 MiB: read for a made-up key, it would cost memory and time that no one is
accountable for. So before the gateway reads a body that may be larger than `PREAUTH_BYTES` (its
Content-Length says so, or it has none), it asks keeper who the credential is (Keeper.Authenticate):
a credential that authenticates nobody is answered 401 with its body unread (and counts against its
address, lorebase_gateway.address_limits). A credential keeper named is remembered for `ttl_s`, so
a client sending many bodies pays the question once in a while; a key revoked meanwhile has its
body read, then refused by keeper as before.

While keeper is asked, a client address may have at most `max_pending` such questions in flight;
more answer `429 rate-limited` (`Retry-After: 1`) at once, so one address cannot hold many large
bodies waiting.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, OrderedDict
from collections.abc import Callable

from starlette.requests import Request

from lorebase.clients import KeeperClient
from lorebase.problems import Problem
from lorebase_gateway.address_limits import address_of

PREAUTH_BYTES = 8192  # a body up to this size is read before its credential is known
KNOWN = 10_000  # credentials remembered


class BodyGate:
    def __init__(
        self,
        keeper: KeeperClient | None,
        *,
        ttl_s: float = 30.0,
        max_pending: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keeper = keeper
        self.ttl_s = ttl_s
        self.max_pending = max_pending
        self._clock = clock
        self._known: OrderedDict[bytes, float] = OrderedDict()
        self._pending: Counter[str] = Counter()

    async def check(self, request: Request, credential: str) -> None:
        """Return once the body may be read: it is small, or its credential authenticates."""
        declared = request.headers.get("content-length")
        if (
            declared is not None
            and declared.isascii()
            and declared.isdigit()
            and int(declared) <= PREAUTH_BYTES
        ):
            return
        digest = hashlib.sha256(credential.encode("latin-1")).digest()
        now = self._clock()
        until = self._known.get(digest)
        if until is not None and until > now:
            return
        assert self.keeper is not None, "the gateway is connected to keeper before it serves"
        client = request.scope.get("client")
        address = address_of(str(client[0])) if client else "unknown"
        if self._pending[address] >= self.max_pending:
            raise Problem(
                429,
                "rate-limited",
                "too many large bodies from this address wait for their credential to be checked; "
                "retry shortly",
                retry_after=1,
                rate_class="unauthenticated",
            )
        self._pending[address] += 1
        try:
            await self.keeper.authenticate(credential=credential)
        finally:
            self._pending[address] -= 1
            if not self._pending[address]:
                del self._pending[address]
        self._known[digest] = now + self.ttl_s
        self._known.move_to_end(digest)
        if len(self._known) > KNOWN:
            self._known.popitem(last=False)

    def forget(self) -> None:
        """Drop every remembered credential (a key was revoked through this gateway)."""
        self._known.clear()


__all__ = ["PREAUTH_BYTES", "BodyGate"]
