"""The web app's session cookie at the gateway's edge: sign-in and sign-out set and clear it, and a
request that presents it is authenticated by it, with CSRF checks on its writes.

- `POST /api/v1/web/session` reads the key from the body and asks keeper to start a web session
  with it (lorebase_keeper.admin.web_sessions); keeper answers the token in a reply header, which
  becomes `Set-Cookie: lorebase_session=<token>; HttpOnly; SameSite=Strict; Path=/; Max-Age=<ttl>`
  (`; Secure` over TLS: `web.cookie_secure`), never the body. `DELETE` ends it and clears the
  cookie (Max-Age=0) whatever keeper answers.
- `SessionCookies` (ASGI middleware, every `/api/` request): a request with no `Authorization`
  header and a `lorebase_session` cookie is treated as `Authorization: Bearer <token>` (the event
  stream too: EventSource sends cookies, not headers). Then, on an unsafe method (POST, PUT,
  PATCH, DELETE), an `Origin` header other than the request's own origin answers 403
  `cross-origin-request`, and a missing or wrong `X-CSRF-Token` 403 `csrf-token-required`; the
  token is derived from the session token (lorebase.credentials.csrf_token), so checking it needs
  no state. Requests with an `Authorization` header are untouched: agents keep working as before.
  A sign-in from another origin is refused the same way (login CSRF).

The request's own origin is its scheme (https behind a trusted proxy's X-Forwarded-Proto, which
uvicorn applies from `http.trusted_proxies`) and its Host header; an https Origin of the same host
is accepted for a request that arrived as http (TLS ended by a proxy that is not listed).
"""

from __future__ import annotations

import hmac
import math
import re
from dataclasses import replace
from datetime import UTC, datetime

import orjson
from starlette.datastructures import Headers
from starlette.requests import Request, cookie_parser
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lorebase.contract import Endpoint
from lorebase.contract.web import SESSION
from lorebase.credentials import SESSION_COOKIE, SESSION_TOKEN_HEADER, csrf_token, unknown_credential
from lorebase.problems import Problem
from lorebase_gateway.edge import check_body, credential, read_body
from lorebase_gateway.gateway import Gateway
from lorebase_gateway.responses import Route, answer_response, problem_response

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_HEADER = "X-CSRF-Token"
# What a token in a cookie may be: keeper makes base64url, an identity provider's access token is a
# JWT (lorebase_gateway.web_oidc).
_TOKEN = re.compile(r"[\x21-\x7e]{1,4096}")
_KEY = re.compile(r"[\x20-\x7e]{1,8192}")


def own_origin(scope: Scope, headers: Headers) -> str:
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}".lower()


def _foreign_origin(scope: Scope, headers: Headers) -> Problem | None:
    origin = headers.get("origin")
    own = own_origin(scope, headers)
    # A page served over https by a TLS proxy the gateway does not trust reaches it as http: the
    # same host over https is still this site (the other way round, an http page, is not).
    upgraded = "https://" + own.removeprefix("http://") if own.startswith("http://") else own
    if origin is None or origin.lower() in (own, upgraded):
        return None
    return Problem(
        403,
        "cross-origin-request",
        f"a write with the session cookie must come from this origin ({own_origin(scope, headers)}), "
        f"not {origin}; agents send Authorization: Bearer <key> instead of the cookie",
    )


def _csrf_refused(token: str, headers: Headers) -> Problem | None:
    sent = headers.get(CSRF_HEADER, "")
    if sent and hmac.compare_digest(sent.encode("latin-1"), csrf_token(token).encode()):
        return None
    return Problem(
        403,
        "csrf-token-required",
        f"a write authenticated by the session cookie needs the header {CSRF_HEADER} with the "
        "csrf_token that POST or GET /api/v1/web/session answered",
    )


class SessionCookies:
    """The cookie as the credential of `/api/` requests that send no Authorization header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        method = scope["method"]
        refused: Problem | None = None
        if scope["path"] == SESSION and method == "POST":  # sign-in: the key is in the body
            refused = _foreign_origin(scope, headers)
        elif "authorization" not in headers:
            token = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE, "")
            if _TOKEN.fullmatch(token):
                if method in UNSAFE:
                    refused = _foreign_origin(scope, headers) or _csrf_refused(token, headers)
                scope = {
                    **scope,
                    "headers": [*scope["headers"], (b"authorization", b"Bearer " + token.encode())],
                }
        if refused is not None:
            await problem_response(refused)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def secure_cookie(request: Request, gw: Gateway, value: str) -> str:
    """A Set-Cookie value with `; Secure` when web.cookie_secure says so (auto: over https)."""
    secure = gw.cookie_secure == "always" or (gw.cookie_secure == "auto" and request.url.scheme == "https")
    return value + "; Secure" if secure else value


def session_cookie(request: Request, gw: Gateway, token: str, max_age: int) -> str:
    value = f"{SESSION_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}"
    return secure_cookie(request, gw, value)


def _start(gw: Gateway, endpoint: Endpoint) -> Route:
    async def start_web_session(request: Request) -> Response:
        limit = gw.body_limit(endpoint.body_limit)
        data = check_body(endpoint, await read_body(request, limit=limit, setting=endpoint.body_limit))
        key = str(orjson.loads(data)["key"]).strip()
        if _KEY.fullmatch(key) is None:
            raise unknown_credential("the key is unknown or revoked; sign in with a live API key")
        answer = await gw.keeper.invoke(endpoint, {}, orjson.dumps({"key": key}), credential=None)
        headers = dict(answer.headers)
        token = headers.pop(SESSION_TOKEN_HEADER, "")
        if _TOKEN.fullmatch(token) is None:
            raise Problem(502, "bad-gateway", "keeper answered a sign-in without a session token")
        response = answer_response(request, replace(answer, headers=headers))
        expires_at = datetime.fromisoformat(answer.json()["expires_at"].replace("Z", "+00:00"))
        max_age = max(1, math.ceil((expires_at - datetime.now(UTC)).total_seconds()))
        response.headers.append("Set-Cookie", session_cookie(request, gw, token, max_age))
        return response

    return start_web_session


def _end(gw: Gateway, endpoint: Endpoint) -> Route:
    async def end_web_session(request: Request) -> Response:
        response: Response
        try:
            await gw.keeper.invoke(endpoint, {}, None, credential=credential(request))
            response = Response(status_code=204)
        except Problem as problem:
            response = problem_response(problem)
        response.headers.append("Set-Cookie", session_cookie(request, gw, "", 0))
        return response

    return end_web_session


WEB_ROUTES = {"start_web_session": _start, "end_web_session": _end}

__all__ = [
    "CSRF_HEADER",
    "UNSAFE",
    "WEB_ROUTES",
    "SessionCookies",
    "own_origin",
    "secure_cookie",
    "session_cookie",
]
