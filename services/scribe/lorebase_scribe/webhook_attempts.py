"""One attempt at a webhook delivery: the document signed now with the webhook's key and POSTed by a
`Sender`, and the outcome recorded: delivered on a 2xx answer; else an attempt counted and the next
one scheduled, or dead after `max_attempts` (`DeliverySettings`). The next attempt is due after a
"full jitter" backoff (anywhere between 0 and `backoff_initial_s * 2^(attempts-1)`, at most
`backoff_max_s`), so that deliveries that failed together do not come back together; and never
before the receiver's `Retry-After` (seconds or an HTTP date, on any answer: a 429 or 503 usually),
up to RETRY_AFTER_MAX_S.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import orjson

from lorebase.backoff import exponential, jittered
from lorebase.settings_model import Webhooks
from lorebase.webhook_secrets import Sealer, SecretKeyError, signature, standard_headers
from lorebase_store.outbox import OutboxEvent
from lorebase_store.webhooks import DeliveryRow, WebhookRow


@dataclass(frozen=True)
class SendResult:
    status: int | None  # the HTTP status, None when no answer came
    error: str | None = None
    retry_after_s: float | None = None  # the answer's Retry-After, in seconds from when it came

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


JITTER = 1.0  # full jitter: a retry is due anywhere between 0 and its backoff (docs/feed.md)
RETRY_AFTER_MAX_S = 86400.0  # a receiver's Retry-After is honoured up to a day


def retry_after(value: str | None, now: datetime) -> float | None:
    """The seconds a `Retry-After` header asks to wait (RFC 9110: delay-seconds or an HTTP date),
    None when it is absent or unreadable; at most RETRY_AFTER_MAX_S, never negative."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    return min(max(seconds, 0.0), RETRY_AFTER_MAX_S)


class Sender(Protocol):
    async def send(self, url: str, body: bytes, headers: dict[str, str]) -> SendResult: ...


@dataclass(frozen=True)
class DeliverySettings:
    max_attempts: int = 8
    backoff_initial_s: float = 5
    backoff_max_s: float = 3600
    concurrency: int = 8
    pass_timeout_s: float = 60
    batch: int = 100
    retention_days: float = 14
    timeout_s: float = 10  # an attempt is cut off after this (webhooks.timeout_s)

    @classmethod
    def of(cls, webhooks: Webhooks) -> DeliverySettings:
        """The delivery part of the `webhooks` settings."""
        return cls(
            max_attempts=webhooks.max_attempts,
            backoff_initial_s=webhooks.backoff_initial_s,
            backoff_max_s=webhooks.backoff_max_s,
            concurrency=webhooks.concurrency,
            pass_timeout_s=webhooks.pass_timeout_s,
            batch=webhooks.batch,
            retention_days=webhooks.retention_days,
            timeout_s=webhooks.timeout_s,
        )

    def backoff(self, attempts: int, retry_after_s: float | None = None) -> float:
        """The wait after `attempts` failed ones: anywhere up to the delay doubling from
        backoff_initial_s up to backoff_max_s (full jitter), so deliveries that failed in one pass
        spread out on their retries; never less than the receiver's Retry-After."""
        wait = jittered(exponential(attempts - 1, self.backoff_initial_s, self.backoff_max_s), JITTER)
        return max(wait, retry_after_s or 0.0)


async def send_attempt(
    sender: Sender,
    sealer: Sealer,
    hook: WebhookRow,
    event: OutboxEvent,
    delivery: DeliveryRow,
    document: dict[str, Any],
) -> SendResult:
    """One attempt: the event document, signed now with the webhook's key, POSTed by `sender`."""
    body = orjson.dumps(document)
    try:
        digest = sealer.unseal(hook.signing_key)
    except SecretKeyError as exc:
        return SendResult(None, str(exc))
    now = int(time.time())
    message_id = f"evt_{event.sequence}"
    headers = {
        "Content-Type": "application/json",
        "Lorebase-Event": event.type,
        "Lorebase-Delivery": delivery.id,
        "Idempotency-Key": message_id,
        "Lorebase-Signature": signature(digest, now, body),
        **standard_headers(digest, message_id, now, body),
    }
    try:
        return await sender.send(hook.url, body, headers)
    except Exception as exc:  # a sender failure fails this attempt only
        return SendResult(None, f"{type(exc).__name__}: {exc}")


def attempt_outcome(
    settings: DeliverySettings, delivery: DeliveryRow, result: SendResult, now: datetime
) -> tuple[str, dict[str, Any]]:
    """The outcome of an attempt and the columns that record it."""
    attempts = delivery.attempts + 1
    error = result.error or f"answered {result.status}"
    if result.ok:
        return "delivered", {
            "status": "delivered",
            "attempts": attempts,
            "next_attempt_at": now,
            "last_error": None,
            "last_status": result.status,
            "finished_at": now,
        }
    if attempts >= settings.max_attempts:
        return "dead", {
            "status": "dead",
            "attempts": attempts,
            "next_attempt_at": now,
            "last_error": error,
            "last_status": result.status,
            "finished_at": now,
        }
    return "failed", {
        "status": "pending",
        "attempts": attempts,
        "next_attempt_at": now + timedelta(seconds=settings.backoff(attempts, result.retry_after_s)),
        "last_error": error,
        "last_status": result.status,
        "finished_at": None,
    }


def given_back(delivery: DeliveryRow, due_at: datetime) -> dict[str, Any]:
    """A claimed delivery given back as it was (not started before pass_timeout_s): due again."""
    return {
        "status": "pending",
        "attempts": delivery.attempts,
        "next_attempt_at": due_at,
        "last_error": delivery.last_error,
        "last_status": delivery.last_status,
        "finished_at": None,
    }


__all__ = [
    "DeliverySettings",
    "SendResult",
    "Sender",
    "attempt_outcome",
    "given_back",
    "retry_after",
    "send_attempt",
]
