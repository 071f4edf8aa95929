"""The REST client's connection to the gateway: its settings, sending one request (built by
lorebase.clients.rest.request), and reading the answer: a `Reply`, or a `Problem` built from the
problem document. A gateway that does not answer is `Problem(503, "unreachable", ...)`.

Retries: an answer of 429 (refused before any work), and a 503 or an unreachable gateway for a
request that is safe to repeat (GET and HEAD, or a write carrying an `Idempotency-Key`, which the
server answers once), are sent again up to `retries` times. The wait is the answer's `Retry-After`
(seconds or an HTTP date) when it has one, else an exponential backoff with full jitter so that
clients refused together do not come back together; never longer than `max_retry_wait_s`.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

import httpx
import orjson

from lorebase.backoff import exponential, jittered
from lorebase.clients.rest.request import HttpRequest
from lorebase.problems import Problem

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_DOMAIN = "supply"


@dataclass(frozen=True)
class RestSettings:
    """Where the gateway is and the credential sent to it (`Authorization: Bearer <key>`)."""

    url: str = DEFAULT_URL
    key: str = ""
    timeout_s: float = 60.0
    session: str = ""
    # The caller's `Authorization` header as it came (Herald over HTTP); wins over `key`.
    authorization: str = ""
    retries: int = 3  # further attempts after a 429, or a 503 of a request safe to repeat
    max_retry_wait_s: float = 30.0  # the longest wait before one attempt, whatever Retry-After says

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> RestSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "url": env.get("LOREBASE_URL") or DEFAULT_URL,
            "key": env.get("LOREBASE_KEY", ""),
            "session": env.get("LOREBASE_SESSION", ""),
        }
        values.update({name: value for name, value in overrides.items() if value not in (None, "")})
        return cls(**values)


@dataclass
class Reply:
    """A successful answer: status, parsed JSON (or the text of a Markdown answer), headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def revision(self) -> str:
        return self.headers.get("lorebase-revision", "")


BACKOFF_BASE_S = 0.5


def repeatable(request: HttpRequest) -> bool:
    """Whether sending `request` twice does no more than sending it once: a read, or a write with
    an idempotency key (the `Idempotency-Key` header or the body's `idempotency_key`)."""
    if request.method in ("GET", "HEAD"):
        return True
    if any(name.lower() == "idempotency-key" and value for name, value in request.headers.items()):
        return True
    try:
        body = orjson.loads(request.content) if request.content else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and bool(body.get("idempotency_key"))


def retry_after_s(value: str | None, *, now: float | None = None) -> float | None:
    """The wait a `Retry-After` header asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def backoff_s(attempt: int, cap_s: float) -> float:
    """Full jitter: a random wait up to BACKOFF_BASE_S · 2^attempt, at most `cap_s`."""
    return jittered(exponential(attempt, BACKOFF_BASE_S, cap_s), 1.0)


def problem_from(response: httpx.Response) -> Problem:
    """The problem an answer that is not a success carries (its document, or its status and text)."""
    try:
        doc = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        text = response.text.strip()[:300] or response.reason_phrase
        return Problem(response.status_code, "error", f"{response.status_code} {text}")
    return Problem.from_document({**doc, "status": response.status_code})


class RestConnection:
    """The HTTP client of one `RestClient`: its headers (credential, session) and `send`."""

    def __init__(self, settings: RestSettings, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        headers = {"User-Agent": "lorebase-client"}
        if settings.authorization:
            headers["Authorization"] = settings.authorization
        elif settings.key:
            headers["Authorization"] = f"Bearer {settings.key}"
        if settings.session:
            headers["Lorebase-Session"] = settings.session
        self._http = httpx.AsyncClient(
            base_url=settings.url.rstrip("/"),
            headers=headers,
            timeout=settings.timeout_s,
            transport=transport,
            trust_env=False,
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _unreachable(self, exc: httpx.HTTPError) -> Problem:
        if isinstance(exc, httpx.TimeoutException):
            return Problem(503, "unreachable", f"{self.settings.url} did not answer in time ({exc})")
        return Problem(
            503, "unreachable", f"cannot reach Lorebase at {self.settings.url} ({exc}); set LOREBASE_URL"
        )

    async def send(self, request: HttpRequest, *, retries: int | None = None) -> Reply:
        """Send `request` (again after a 429 or a 503, as the module says, up to `retries` times,
        default the settings'); its answer as a `Reply`, or the `Problem` it carries."""
        limit = self.settings.retries if retries is None else retries
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    request.method,
                    request.path,
                    params=request.query,
                    content=request.content,
                    headers=request.headers,
                )
            except httpx.HTTPError as exc:
                if attempt < limit and repeatable(request):
                    await asyncio.sleep(backoff_s(attempt, self.settings.max_retry_wait_s))
                    attempt += 1
                    continue
                raise self._unreachable(exc) from exc
            status = response.status_code
            if attempt < limit and (status == 429 or (status == 503 and repeatable(request))):
                asked = retry_after_s(response.headers.get("retry-after"))
                wait = backoff_s(attempt, self.settings.max_retry_wait_s) if asked is None else asked
                await asyncio.sleep(min(wait, self.settings.max_retry_wait_s))
                attempt += 1
                continue
            break
        if response.status_code >= 400:
            raise problem_from(response)
        content_type = response.headers.get("content-type", "")
        parsed: Any
        if not response.content:
            parsed = None
        elif "json" in content_type:
            parsed = orjson.loads(response.content)
        else:
            parsed = response.text
        return Reply(response.status_code, parsed, response.headers)


__all__ = [
    "DEFAULT_DOMAIN",
    "DEFAULT_URL",
    "Reply",
    "RestConnection",
    "RestSettings",
    "backoff_s",
    "problem_from",
    "repeatable",
    "retry_after_s",
]
