"""The REST client's connection to the gateway: its settings, sending one request (built by
lorebase.clients.rest.request), and reading the answer: a `Reply`, or a `Problem` built from the
problem document. A gateway that does not answer is `Problem(503, "unreachable", ...)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

import httpx
import orjson

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

    async def send(self, request: HttpRequest) -> Reply:
        """Send `request`; its answer as a `Reply`, or the `Problem` it carries."""
        try:
            response = await self._http.request(
                request.method,
                request.path,
                params=request.query,
                content=request.content,
                headers=request.headers,
            )
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
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
    "problem_from",
]
