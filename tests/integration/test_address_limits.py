"""Requests without a valid credential, per client address: a burst of bad keys is answered 429
before keeper is asked (its lookups stop, counted by its RPC metric), while credentials that
authenticated before still pass; X-Forwarded-For counts only from a trusted proxy."""

from __future__ import annotations

import asyncio
import secrets

import httpx
from lorebase_gateway.address_limits import AddressLimits
from lorebase_gateway.app import create_app
from prometheus_client import REGISTRY

from tests.integration.conftest import Stack
from tests.integration.gateway_server import serving

DOMAINS = "/api/v1/domains"


def keeper_refusals() -> float:
    """RPCs keeper (or its memory store) answered UNAUTHENTICATED: each one looked a key up."""
    total = 0.0
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if (
                sample.name == "lorebase_grpc_server_handled_total"
                and sample.labels.get("grpc_code") == "UNAUTHENTICATED"
            ):
                total += sample.value
    return total


async def refusals_after(expected: float) -> float:
    """keeper_refusals() once the RPCs answered so far are counted: keeper counts a call when its
    handler returns, which may be just after the gateway already has the status (same event loop)."""
    for _ in range(100):
        if keeper_refusals() >= expected:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)  # and nothing more arrives
    return keeper_refusals()


def bad_key() -> dict[str, str]:
    return {"Authorization": f"Bearer lbk_{secrets.token_hex(16)}"}


async def test_a_burst_of_bad_keys_is_refused_before_keeper_looks_them_up(stack: Stack) -> None:
    stack.gateway.address_limits = AddressLimits(per_second=0.01, burst=5)
    assert (await stack.http.get(DOMAINS, headers=stack.admin)).status_code == 200
    fresh = await stack.principal("usr_fresh", type="service")  # a good key not used yet
    before = keeper_refusals()
    for _ in range(5):
        assert (await stack.http.get(DOMAINS, headers=bad_key())).status_code == 401
    assert await refusals_after(before + 5) == before + 5

    for _ in range(20):
        refused = await stack.http.get(DOMAINS, headers=bad_key())
        assert refused.status_code == 429, refused.text
    problem = refused.json()
    assert problem["code"] == "rate-limited" and problem["rate_class"] == "unauthenticated"
    assert "http.unauthenticated_rate_limit" in problem["detail"]
    assert int(refused.headers["Retry-After"]) >= 1
    assert (await stack.http.get(DOMAINS)).status_code == 429  # no credential at all
    assert (await stack.http.post("/api/v1/memory/query", json={}, headers=bad_key())).status_code == 429
    assert await refusals_after(before + 5) == before + 5, "no lookup once the address is out of tokens"

    # The admin's key authenticated through this gateway before: it still passes.
    assert (await stack.http.get(DOMAINS, headers=stack.admin)).status_code == 200
    # A good key this gateway has not seen waits like the others from this address.
    assert (await stack.http.get(DOMAINS, headers=fresh)).status_code == 429
    # Another address has its own allowance.
    elsewhere = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(stack.gateway), client=("203.0.113.9", 4000)),
        base_url="http://lorebase.test",
    )
    async with elsewhere:
        assert (await elsewhere.get(DOMAINS, headers=bad_key())).status_code == 401
        assert (await elsewhere.get(DOMAINS, headers=fresh)).status_code == 200


async def test_x_forwarded_for_counts_only_from_a_trusted_proxy(stack: Stack) -> None:
    stack.gateway.address_limits = AddressLimits(per_second=0.01, burst=2)

    async def statuses(url: str, count: int) -> list[int]:
        async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=20) as http:
            return [
                (
                    await http.get(DOMAINS, headers={**bad_key(), "X-Forwarded-For": f"198.51.100.{n}"})
                ).status_code
                for n in range(count)
            ]

    async with serving(stack.gateway) as served:  # no trusted proxies: the socket peer counts
        assert await statuses(served.url, 4) == [401, 401, 429, 429]
    stack.gateway.address_limits = AddressLimits(per_second=0.01, burst=2)
    async with serving(stack.gateway, LOREBASE_HTTP__TRUSTED_PROXIES="[127.0.0.1]") as served:
        assert await statuses(served.url, 4) == [401, 401, 401, 401]  # each forwarded client counts
