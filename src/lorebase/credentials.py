"""Credentials: what is stored of a key, and the key a request presents.

A key is stored only as the SHA-256 hex digest of its text (`key_digest`). A request presents it as
`Authorization: Bearer <key>` (`presented_digest`: the digest to look up, or 401). Every service
that authenticates a caller — keeper for Domain data and for agent memory, feed for the memory
journal — reads the header with these two functions, so a credential means the same everywhere.

A web session (the web app's sign-in, lorebase_keeper.admin.web_sessions) is such a credential
too: a token keeper makes from a key, stored as its digest, that the browser holds in the
`lorebase_session` cookie (SESSION_COOKIE) and the gateway presents as `Bearer <token>`. Its CSRF
token is derived from it (`csrf_token`), so the gateway checks a write's `X-CSRF-Token` without
storing anything, and a page learns it only from the sign-in answer or GET /web/session.
"""

from __future__ import annotations

import hashlib
import hmac

from lorebase.problems import Problem


def key_digest(key: str) -> str:
    """What is stored of a credential: the SHA-256 hex digest of its text."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def presented_digest(authorization: str | None) -> str:
    """The digest of the key an `Authorization: Bearer <key>` header presents; 401 without one."""
    if not authorization:
        raise unknown_credential("send a credential as 'Authorization: Bearer <key>'")
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise unknown_credential("the Authorization header must be 'Bearer <key>'")
    return key_digest(key.strip())


# The built-in admin principal: every permission in every Domain and memory scope.
ADMIN_PRINCIPAL = "usr_admin"

SESSION_COOKIE = "lorebase_session"
SESSION_TOKEN_PREFIX = "lbs_"
# The header of keeper's sign-in reply that carries the new session's token to the gateway.
SESSION_TOKEN_HEADER = "lorebase-web-session"
_CSRF_LABEL = b"lorebase.web.csrf.v1"


def csrf_token(session_token: str) -> str:
    """The CSRF token of a web session: HMAC-SHA256 of a fixed label keyed by the session token (hex)."""
    return hmac.new(session_token.encode("utf-8"), _CSRF_LABEL, hashlib.sha256).hexdigest()


def unknown_credential(detail: str = "the credential is unknown or revoked; ask for a new key") -> Problem:
    """The 401 of a credential that is missing, unknown or revoked: `credential: "refused"` tells the
    gateway's per-address limits that it authenticates nobody (lorebase_gateway.address_limits); a
    live credential refused for another reason (an API key where a web session is needed) says
    nothing of the kind."""
    return Problem(401, "unauthenticated", detail, credential="refused")


__all__ = [
    "ADMIN_PRINCIPAL",
    "SESSION_COOKIE",
    "SESSION_TOKEN_HEADER",
    "SESSION_TOKEN_PREFIX",
    "csrf_token",
    "key_digest",
    "presented_digest",
    "unknown_credential",
]
