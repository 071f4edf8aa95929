"""The REST client's connection to the gateway: its settings, sending one request of a route, and
reading the answer (a `Reply`, or a `Problem` built from the problem document).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import quote

import httpx
import orjson

from lorebase.clients.rest.routes import ROUTES
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
    try:
        doc = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        text = response.text.strip()[:300] or response.reason_phrase
        return Problem(response.status_code, "error", f"{response.status_code} {text}")
    extra = {k: v for k, v in doc.items() if k not in ("type", "title", "status", "detail", "code")}
    code = str(doc.get("code") or str(doc.get("type", "error")).rsplit("/", 1)[-1])
    return Problem(
        response.status_code,
        code,
        str(doc.get("detail", "")),
        title=str(doc["title"]) if doc.get("title") else None,
        **extra,
    )


def query_params(params: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None or value == "" or value is False or value == 0:
            continue
        out[name] = "true" if value is True else str(value)
    return out


def request_body(members: Mapping[str, Any]) -> dict[str, Any]:
    """A request body without the members left at their defaults (None, empty)."""
    return {k: v for k, v in members.items() if v is not None and v != "" and v != [] and v != {}}


class RestConnection:
    """The HTTP client of one `RestClient` and the plumbing every route's method calls."""

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

    @staticmethod
    def path(name: str, **params: str) -> str:
        template = ROUTES[name].path
        for member, value in params.items():
            if not value:
                raise Problem(400, "invalid-parameter", f"{member} must not be empty", parameter=member)
            safe = "/" if member == "branch" else ""
            template = template.replace("{" + member + "}", quote(str(value), safe=safe))
        return template

    async def _send(
        self,
        name: str,
        *,
        path: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        route = ROUTES[name]
        url = self.path(name, **(path or {}))
        content = None
        sent_headers = dict(headers or {})
        if body is not None:
            content = orjson.dumps(body)
            sent_headers["Content-Type"] = "application/json"
        try:
            response = await self._http.request(
                route.method, url, params=query_params(query or {}), content=content, headers=sent_headers
            )
        except httpx.TimeoutException as exc:
            raise Problem(503, "unreachable", f"{self.settings.url} did not answer in time ({exc})") from exc
        except httpx.HTTPError as exc:
            raise Problem(
                503, "unreachable", f"cannot reach Lorebase at {self.settings.url} ({exc}); set LOREBASE_URL"
            ) from exc
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
    "query_params",
    "request_body",
]
