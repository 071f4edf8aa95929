"""Web sessions: the web app's sign-in, a short-lived credential derived from an API key.

Signing in presents a key (as the call's credential); keeper makes a random token, keeps only its
digest, as a row of api_keys naming the key as its parent and an expiry (`web.session_ttl_s`), and
answers the token in the reply's `lorebase-web-session` header (the gateway turns it into the
HttpOnly cookie; the body never holds it). The token then authenticates exactly like its parent
key, through the one credential path (lorebase.credentials, Authenticator, agent memory and the
journal read keys with `live_key`): the same principal with the same grants, until it expires,
until it is ended (sign-out), or until its parent key is revoked (revoke_key revokes the sessions
made from it in the same transaction). A session cannot start another: a token never outlives or
replaces the key it came from.

The parent's row is held FOR SHARE while the session is written, so a concurrent revocation of the
key either comes first (the sign-in answers 401) or waits and then revokes the new session too.
Each sign-in forgets the key's sessions that have expired (their rows only: the audit log keeps
`web_session.start` and `web_session.end`). These calls are never steps of an agent session
(lorebase_keeper.api.rpc.UNTRACED): their answers carry the CSRF token.

Signed in through an identity provider instead ("Sign in with <issuer>", lorebase_gateway.web_oidc),
the cookie holds the provider's access token itself: it authenticates as any such token does
(lorebase.oidc), so the session lasts as long as the token, `GET` describes it from the token's
claims, and sign-out remembers the token as ended until it expires (`end_token`): from then on it
authenticates nobody, in the browser or anywhere else.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from lorebase.credentials import (
    SESSION_TOKEN_HEADER,
    SESSION_TOKEN_PREFIX,
    csrf_token,
    key_digest,
    presented_digest,
    unknown_credential,
)
from lorebase.ids import iso, new_id, utc_now
from lorebase.oidc import looks_like_jwt
from lorebase.problems import Problem
from lorebase_keeper.access.auth import ADMIN_PRINCIPAL
from lorebase_keeper.runtime import Runtime
from lorebase_store import CredentialRow, PrincipalRow, Txn

TOKEN_HEADER = SESSION_TOKEN_HEADER  # the reply header that carries a new session's token (never the body)


def _not_a_session(row: CredentialRow | None) -> Problem:
    """401 for a credential that is not a live web session; one that authenticates nobody says so
    (unknown_credential), a live API key does not."""
    detail = (
        "no web session: sign in with POST /api/v1/web/session and send its cookie; the session may "
        "have expired, been ended, or its key revoked"
    )
    return unknown_credential(detail) if row is None else Problem(401, "unauthenticated", detail)


def _answer(principal: PrincipalRow, expires_at: datetime, token: str) -> dict[str, Any]:
    return {
        "principal": principal.id,
        "principal_type": principal.type,
        "admin": principal.id == ADMIN_PRINCIPAL,
        "expires_at": iso(expires_at),
        "csrf_token": csrf_token(token),
    }


async def start(rt: Runtime, authorization: str | None) -> tuple[dict[str, Any], str]:
    """Sign in with the key `authorization` presents: the session's answer and its token."""
    digest = presented_digest(authorization)
    token = SESSION_TOKEN_PREFIX + secrets.token_urlsafe(32)
    session_id = new_id("key")
    at = utc_now()
    expires_at = at + timedelta(seconds=rt.settings.model.web.session_ttl_s)

    async def txn_fn(txn: Txn) -> CredentialRow | None:
        parent = await txn.credential_for_digest(digest, lock=True)
        if parent is None or parent.parent_key_id is not None:
            return parent
        await txn.prune_web_sessions(parent.key_id)
        await txn.insert_web_session(
            session_id, parent.key_id, parent.principal.id, key_digest(token), at, expires_at
        )
        await txn.audit(
            parent.principal.id,
            "web_session.start",
            at,
            target=parent.principal.id,
            details={"key_id": parent.key_id, "session_id": session_id, "expires_at": iso(expires_at)},
        )
        return parent

    parent = await rt.db.run_interaction("start_web_session", txn_fn)
    if parent is None:
        raise unknown_credential("the key is unknown or revoked; sign in with a live API key")
    if parent.parent_key_id is not None:
        raise Problem(401, "unauthenticated", "a web session cannot start another: sign in with an API key")
    return _answer(parent.principal, expires_at, token), token


async def current(rt: Runtime, authorization: str | None) -> tuple[CredentialRow, str]:
    """The live web session the credential is, and its token; 401 for anything else."""
    digest = presented_digest(authorization)
    row = await rt.db.read("web_session", lambda txn: txn.credential_for_digest(digest))
    if row is None or row.parent_key_id is None or row.expires_at is None:
        raise _not_a_session(row)
    token = (authorization or "").partition(" ")[2].strip()
    return row, token


def _provider_token(rt: Runtime, authorization: str | None) -> str:
    """The identity provider's access token the credential is ("": it is none)."""
    token = (authorization or "").partition(" ")[2].strip()
    return token if rt.auth.oidc is not None and looks_like_jwt(token) else ""


async def describe(rt: Runtime, authorization: str | None) -> dict[str, Any]:
    provided = _provider_token(rt, authorization)
    if provided:
        identity = await rt.auth.verify_token(provided)
        principal = PrincipalRow(identity.principal_id, "user", identity.name)
        return _answer(principal, datetime.fromtimestamp(identity.expires_at, UTC), provided)
    row, token = await current(rt, authorization)
    assert row.expires_at is not None
    return _answer(row.principal, row.expires_at, token)


async def end(rt: Runtime, authorization: str | None) -> None:
    """Sign out: the session stops authenticating at once (in this keeper: its cache is dropped)."""
    provided = _provider_token(rt, authorization)
    if provided:
        await _end_token(rt, provided)
        return
    row, _ = await current(rt, authorization)
    at = utc_now()

    async def txn_fn(txn: Txn) -> bool:
        ended = await txn.end_web_session(row.key_id, at)
        if ended:
            await txn.audit(
                row.principal.id,
                "web_session.end",
                at,
                target=row.principal.id,
                details={"session_id": row.key_id},
            )
        return ended

    if not await rt.db.run_interaction("end_web_session", txn_fn):
        raise _not_a_session(None)
    rt.auth.forget()


async def _end_token(rt: Runtime, token: str) -> None:
    identity = await rt.auth.verify_token(token)
    at = utc_now()
    expires_at = datetime.fromtimestamp(identity.expires_at, UTC) + timedelta(
        seconds=rt.settings.model.keeper.auth.oidc.leeway_s
    )
    session_id = new_id("key")

    async def txn_fn(txn: Txn) -> bool:
        ended = await txn.end_token(session_id, identity.principal_id, key_digest(token), at, expires_at)
        if ended:
            await txn.audit(
                identity.principal_id,
                "web_session.end",
                at,
                target=identity.principal_id,
                details={"session_id": session_id, "signed_in_with": "identity provider"},
            )
        return ended

    await rt.db.run_interaction("end_token", txn_fn)
    rt.auth.forget()


__all__ = ["TOKEN_HEADER", "current", "describe", "end", "start"]
