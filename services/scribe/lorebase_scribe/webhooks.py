"""The HTTP sender of webhook deliveries (lorebase_scribe.webhook_delivery.deliver_pending calls it).

Every attempt checks the target with the policy webhooks are created with
(lorebase.webhook_targets), resolves the host once and checks every address (unless
webhooks.allow_private_targets). It then connects only to those checked addresses, and keeps the
host name in the Host header and as the TLS server name. A DNS answer that changes after the check
therefore cannot steer the request to an internal service. Redirects are never followed, the
response body is never kept or parsed (up to 64 KiB is drained so that the connection can be
reused), and the whole attempt (lookup included) is cut off after
webhooks.timeout_s. A connection to one address is cut off after webhooks.connect_timeout_s. Give
the sender an httpx.AsyncClient built with trust_env=False, so no proxy from the environment sits
in between.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import httpx

from lorebase.settings_model import Webhooks
from lorebase.webhook_secrets import Sealer
from lorebase.webhook_targets import Resolver, TargetPolicy, TargetRefused, refusal, system_resolver
from lorebase_scribe.webhook_attempts import DeliverySettings, SendResult, retry_after
from lorebase_scribe.webhook_delivery import PassResult, deliver_pending
from lorebase_store import Database

DRAIN_BYTES = 65536
DRAIN_S = 1.0


async def _drain(response: httpx.Response) -> None:
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                if read > DRAIN_BYTES:
                    return


class HttpxSender:
    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        allowed_schemes: tuple[str, ...] = ("https",),
        allow_private_targets: bool = False,
        timeout_s: float = 10,
        connect_timeout_s: float = 5,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.client = client
        self.policy = TargetPolicy(allowed_schemes, allow_private_targets)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.resolver = resolver

    async def checked_addresses(self, url: str) -> tuple[str, int, list[str]]:
        """The host, port and checked addresses of a target (lorebase.webhook_targets: the policy
        webhooks are created with); TargetRefused when it may not be used."""
        target = self.policy.parse(url)
        return target.host, target.port, await self.policy.addresses(target, self.resolver)

    async def send(self, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._send(url, body, headers)
        except TimeoutError:
            return SendResult(None, f"no answer within webhooks.timeout_s ({self.timeout_s:g} s)")
        except TargetRefused as exc:
            return SendResult(None, f"refused target: {exc}")

    async def _send(self, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
        host, port, addresses = await self.checked_addresses(url)
        parts = urlsplit(url)
        host_header = parts.netloc.rpartition("@")[2]
        timeout = httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s)
        errors = []
        for address in addresses:
            literal = f"[{address}]" if ":" in address else address
            target = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path or "/", parts.query, ""))
            try:
                async with self.client.stream(
                    "POST",
                    target,
                    content=body,
                    headers={**headers, "Host": host_header},
                    timeout=timeout,
                    follow_redirects=False,
                    extensions={"sni_hostname": host},
                ) as response:
                    # The status is the answer. The body is neither kept nor parsed: up to
                    # DRAIN_BYTES of it are drained for at most DRAIN_S, so that the connection can
                    # carry the next delivery; a longer or slower one closes the connection.
                    await _drain(response)
                    if 200 <= response.status_code < 300:
                        return SendResult(response.status_code)
                    return SendResult(
                        response.status_code,
                        f"answered {response.status_code}",
                        retry_after(response.headers.get("retry-after"), datetime.now(UTC)),
                    )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                errors.append(f"{address}: {type(exc).__name__}: {exc}")
            except httpx.HTTPError as exc:
                return SendResult(None, f"{address}: {type(exc).__name__}: {exc}")
        return SendResult(None, "; ".join(errors) or "no address answered")


def sender_from_settings(client: httpx.AsyncClient, webhooks: Webhooks) -> HttpxSender:
    """The sender of the `webhooks` settings: its schemes, private targets and timeouts."""
    return HttpxSender(
        client,
        allowed_schemes=tuple(webhooks.allowed_schemes),
        allow_private_targets=webhooks.allow_private_targets,
        timeout_s=webhooks.timeout_s,
        connect_timeout_s=webhooks.connect_timeout_s,
    )


async def delivery_pass(db: Database, client: httpx.AsyncClient, webhooks: Webhooks) -> PassResult:
    """One webhook_delivery job: lorebase_scribe.webhook_delivery.deliver_pending with this sender."""
    return await deliver_pending(
        db, sender_from_settings(client, webhooks), Sealer.of(webhooks), DeliverySettings.of(webhooks)
    )


__all__ = [
    "HttpxSender",
    "TargetRefused",
    "delivery_pass",
    "refusal",
    "sender_from_settings",
    "system_resolver",
]
