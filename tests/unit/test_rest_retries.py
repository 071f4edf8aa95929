"""The REST client sends again after a 429, and after a 503 when the request is safe to repeat,
waiting what Retry-After asks (capped) or a jittered backoff (lorebase.clients.rest.connection)."""

from __future__ import annotations

import email.utils

import httpx
import pytest

from lorebase.clients.rest import RestClient, RestSettings
from lorebase.clients.rest.connection import backoff_s, retry_after_s
from lorebase.problems import Problem


class Script:
    """A transport answering the statuses it is given in turn, recording what it was sent."""

    def __init__(self, *answers: tuple[int, dict[str, str]]) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        status, headers = self.answers.pop(0) if self.answers else (200, {})
        if status >= 400:
            body = {"type": "https://lorebase.dev/problems/x", "title": "x", "status": status, "detail": "d"}
            return httpx.Response(status, json=body, headers=headers)
        return httpx.Response(200, json={"ok": True}, headers=headers)


def client(script: Script, **settings: object) -> RestClient:
    values = {"url": "http://gateway.test", "key": "k", **settings}
    return RestClient(RestSettings(**values), transport=httpx.MockTransport(script))  # type: ignore[arg-type]


async def test_429_waits_what_retry_after_asks_then_succeeds() -> None:
    script = Script((429, {"Retry-After": "0"}), (429, {"Retry-After": "0"}))
    async with client(script) as rest:
        reply = await rest.call("list_domains")
    assert reply.body == {"ok": True} and len(script.requests) == 3


async def test_a_write_is_repeated_after_429_but_after_503_only_with_an_idempotency_key() -> None:
    body = {"parameters": {"supplier": "S-1001", "score": 80}}
    script = Script((429, {"Retry-After": "0"}))
    async with client(script) as rest:
        await rest.call("execute_operation", domain="supply", operation="set_risk", **body)
    assert len(script.requests) == 2
    script = Script((503, {"Retry-After": "0"}))
    async with client(script) as rest:
        with pytest.raises(Problem) as refused:
            await rest.call("execute_operation", domain="supply", operation="set_risk", **body)
    assert refused.value.status == 503 and len(script.requests) == 1
    script = Script((503, {"Retry-After": "0"}))
    async with client(script) as rest:
        await rest.call(
            "execute_operation", domain="supply", operation="set_risk", idempotency_key="op-1", **body
        )
    assert len(script.requests) == 2
    assert script.requests[0].headers["idempotency-key"] == script.requests[1].headers["idempotency-key"]
    script = Script((503, {"Retry-After": "0"}))  # the key as a body member counts the same
    async with client(script) as rest:
        await rest.call(
            "execute_operation",
            domain="supply",
            operation="set_risk",
            body={**body, "idempotency_key": "op-2"},
        )
    assert len(script.requests) == 2


async def test_retries_are_bounded_and_the_last_problem_is_raised() -> None:
    script = Script(*[(503, {"Retry-After": "0"})] * 10)
    async with client(script, retries=2) as rest:
        with pytest.raises(Problem) as refused:
            await rest.call("list_domains")
    assert refused.value.status == 503 and len(script.requests) == 3


async def test_health_is_asked_once() -> None:
    script = Script((503, {"Retry-After": "0"}))
    async with client(script) as rest:
        answer = await rest.health()
    assert answer["status"] == "unavailable" and len(script.requests) == 1


async def test_retry_after_is_capped() -> None:
    script = Script((429, {"Retry-After": "3600"}))  # uncapped, the test would wait an hour (and time out)
    async with client(script, max_retry_wait_s=0.01) as rest:
        await rest.call("list_domains")
    assert len(script.requests) == 2


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_s("7") == 7.0
    assert retry_after_s(None) is None and retry_after_s("soon") is None and retry_after_s("\u00b2") is None
    later = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after_s(later, now=1_000_000) == pytest.approx(30.0)
    assert retry_after_s(later, now=2_000_000) == 0.0


def test_backoff_is_jittered_and_capped() -> None:
    waits = {backoff_s(3, 30.0) for _ in range(50)}
    assert len(waits) > 1 and all(0 <= w <= 4.0 for w in waits)
    assert all(backoff_s(20, 2.0) <= 2.0 for _ in range(50))


def test_webhook_retries_are_jittered_within_a_documented_schedule() -> None:
    from lorebase_scribe.webhook_attempts import DeliverySettings

    settings = DeliverySettings(backoff_initial_s=60, backoff_max_s=90)
    seconds = {settings.backoff(1) for _ in range(50)}
    assert len(seconds) > 1 and all(0 <= s <= 60 for s in seconds)  # full jitter
    assert all(0 <= settings.backoff(5) <= 90 for _ in range(50))
    # Never sooner than the receiver asks, even past the backoff.
    assert all(settings.backoff(1, retry_after_s=25) >= 25 for _ in range(50))
    assert all(settings.backoff(5, retry_after_s=600) == 600 for _ in range(50))


def test_webhook_retry_after_reads_seconds_and_http_dates() -> None:
    from datetime import UTC, datetime

    from lorebase_scribe.webhook_attempts import RETRY_AFTER_MAX_S, retry_after

    now = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)
    assert retry_after("25", now) == 25.0
    assert retry_after("Wed, 02 Dec 2026 10:01:30 GMT", now) == 90.0
    assert retry_after("Wed, 02 Dec 2026 09:00:00 GMT", now) == 0.0  # in the past: now
    assert retry_after("99999999", now) == RETRY_AFTER_MAX_S
    assert retry_after("soon", now) is None and retry_after(None, now) is None
