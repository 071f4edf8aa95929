"""The web app's "Sign in with <issuer>": the authorization code flow with PKCE, run by the gateway.

An issuer of `keeper.auth.oidc.issuers` with a `web` client is offered to the web app
(`GET /api/v1/web/identity-providers`). Its sign-in:

1. `GET /api/v1/web/oidc/{provider}/start?next=<app path>` makes a fresh `state`, `nonce` and PKCE
   verifier, keeps them with `next` in the HttpOnly cookie `lorebase_oidc` (SameSite=Lax, so that
   the provider's redirect back brings it; Path=/api/v1/web/oidc; 10 minutes) and sends the browser
   to the provider's authorization endpoint (from its discovery document) with the S256 challenge.
   Nothing is kept in the gateway: any replica finishes a sign-in another started.
2. The provider sends the browser back to `GET /api/v1/web/oidc/callback?code&state`. The state must
   be the cookie's (else 400: a sign-in this browser did not start, the login CSRF of a forged
   callback); the code is exchanged at the provider's token endpoint with the verifier (and the
   client secret of a confidential client, client_secret_post).
3. The ID token is verified with the one verifier (lorebase.oidc: the issuer's keys, `iss`, `aud` the
   web client, `exp`, and the nonce of step 1); the access token is verified by keeper exactly as
   every request's token is (`GET /web/session` with it: its issuer and tenant trusted, its
   audience Lorebase's, not expired, not signed out of), which also answers who it names.
4. The answer is 303 to the web app with the same session cookie the key sign-in sets
   (lorebase_gateway.web_session), holding the access token: the cookie authenticates as it, the
   CSRF token is derived from it, the session ends when the token expires, and sign-out ends the
   token in Lorebase (lorebase_keeper.admin.web_sessions).

Every refusal is problem details and sets no session cookie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
from datetime import UTC, datetime
from urllib.parse import urlencode

import httpx
import orjson
from starlette.requests import Request, cookie_parser
from starlette.responses import Response

from lorebase.contract import BY_NAME, Endpoint
from lorebase.contract.web import CALLBACK, OIDC
from lorebase.credentials import unknown_credential
from lorebase.problems import Problem
from lorebase.settings_model import OidcIssuer
from lorebase_gateway.edge import parameters
from lorebase_gateway.gateway import Gateway, WebSignIn
from lorebase_gateway.responses import Route
from lorebase_gateway.web_session import own_origin, secure_cookie, session_cookie

FLOW_COOKIE = "lorebase_oidc"
FLOW_TTL_S = 600
MAX_COOKIE_TOKEN = 3800  # a cookie holds about 4 KB; a larger access token cannot be the session
APP = "/app"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _flow_cookie(request: Request, gw: Gateway, value: str, max_age: int) -> str:
    cookie = f"{FLOW_COOKIE}={value}; HttpOnly; SameSite=Lax; Path={OIDC}; Max-Age={max_age}"
    return secure_cookie(request, gw, cookie)


def _offered(gw: Gateway) -> WebSignIn:
    if gw.web_sign_in is None:
        raise Problem(404, "not-found", "no identity provider is offered to the web app: sign in with a key")
    return gw.web_sign_in


def _list(gw: Gateway, endpoint: Endpoint) -> Route:
    async def list_identity_providers(request: Request) -> Response:
        providers = [] if gw.web_sign_in is None else list(gw.web_sign_in.providers.values())
        body = {
            "providers": [
                {
                    "id": i.web.id,
                    "label": i.web.label,
                    "issuer": i.issuer,
                    "start": f"{OIDC}/{i.web.id}/start",
                }
                for i in providers
                if i.web is not None
            ]
        }
        return Response(orjson.dumps(body), media_type="application/json")

    return list_identity_providers


def _start(gw: Gateway, endpoint: Endpoint) -> Route:
    async def start_oidc_sign_in(request: Request) -> Response:
        values = parameters(endpoint, request)
        sign_in = _offered(gw)
        issuer = sign_in.provider(values["provider"])
        assert issuer.web is not None
        discovery = await sign_in.verifier.discovery(issuer)
        authorize = str(discovery.get("authorization_endpoint") or "")
        if not authorize:
            raise Problem(502, "bad-gateway", "the identity provider names no authorization_endpoint")
        state, nonce, verifier = (
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(48),
        )
        flow = {"p": issuer.web.id, "s": state, "n": nonce, "v": verifier, "x": values["next"]}
        query = urlencode(
            {
                "response_type": "code",
                "client_id": issuer.web.client_id,
                "redirect_uri": own_origin(request.scope, request.headers) + CALLBACK,
                "scope": " ".join(issuer.web.scopes),
                "state": state,
                "nonce": nonce,
                "code_challenge": _b64(hashlib.sha256(verifier.encode()).digest()),
                "code_challenge_method": "S256",
            }
        )
        separator = "&" if "?" in authorize else "?"
        response = Response(status_code=302, headers={"Location": authorize + separator + query})
        response.headers.append("Set-Cookie", _flow_cookie(request, gw, _b64(orjson.dumps(flow)), FLOW_TTL_S))
        return response

    return start_oidc_sign_in


def _mismatch(detail: str) -> Problem:
    return Problem(400, "sign-in-state-mismatch", detail + "; start the sign-in again from the web app")


def _flow(request: Request, state: str) -> dict[str, str]:
    """The sign-in this browser started (its cookie), when `state` is the one it sent."""
    raw = cookie_parser(request.headers.get("cookie", "")).get(FLOW_COOKIE, "")
    try:
        flow = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        if not isinstance(flow, dict) or not all(isinstance(flow.get(k), str) for k in "psnvx"):
            raise ValueError("not a sign-in")
    except ValueError:
        raise _mismatch("this browser started no sign-in (or it took longer than 10 minutes)") from None
    if not state or not hmac.compare_digest(state.encode(), str(flow["s"]).encode()):
        raise _mismatch("the state is not the one this browser's sign-in sent")
    return {k: str(v) for k, v in flow.items()}


async def _tokens(
    sign_in: WebSignIn, issuer: OidcIssuer, code: str, verifier: str, redirect_uri: str
) -> tuple[str, str]:
    """The ID token and the access token the provider issues for the code."""
    assert issuer.web is not None
    discovery = await sign_in.verifier.discovery(issuer)
    endpoint = str(discovery.get("token_endpoint") or "")
    if not endpoint:
        raise Problem(502, "bad-gateway", "the identity provider names no token_endpoint")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "client_id": issuer.web.client_id,
        "code_verifier": verifier,
    }
    if issuer.web.client_secret:
        form["client_secret"] = issuer.web.client_secret
    try:
        async with httpx.AsyncClient(timeout=15, trust_env=False, follow_redirects=False) as client:
            answer = await client.post(endpoint, data=form, headers={"Accept": "application/json"})
        document = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise Problem(502, "bad-gateway", f"the identity provider's token endpoint failed ({exc})") from exc
    if answer.status_code != 200 or not isinstance(document, dict):
        error = document.get("error") if isinstance(document, dict) else answer.status_code
        raise unknown_credential(f"the identity provider issued no tokens for this sign-in ({error})")
    id_token, access_token = document.get("id_token"), document.get("access_token")
    if not isinstance(id_token, str) or not isinstance(access_token, str):
        raise unknown_credential("the identity provider answered without an ID token and an access token")
    return id_token, access_token


def _finish(gw: Gateway, endpoint: Endpoint) -> Route:
    describe = BY_NAME["get_web_session"]

    async def finish_oidc_sign_in(request: Request) -> Response:
        values = parameters(endpoint, request)
        sign_in = _offered(gw)
        flow = _flow(request, values["state"])
        issuer = sign_in.provider(flow["p"])
        assert issuer.web is not None
        if values["error"]:
            reason = ": ".join(v for v in (values["error"], values["error_description"]) if v)
            raise unknown_credential(f"the identity provider refused the sign-in ({reason})")
        if not values["code"]:
            raise Problem(400, "invalid-parameter", "the identity provider sent no code", parameter="code")
        redirect_uri = own_origin(request.scope, request.headers) + CALLBACK
        id_token, access_token = await _tokens(sign_in, issuer, values["code"], flow["v"], redirect_uri)
        await sign_in.verifier.verify_id_token(
            id_token, issuer=issuer, client_id=issuer.web.client_id, nonce=flow["n"]
        )
        if len(access_token) > MAX_COOKIE_TOKEN:
            raise Problem(
                400,
                "token-too-large",
                f"the access token ({len(access_token)} characters) does not fit a cookie; ask the "
                "identity provider's administrator for fewer claims in Lorebase's tokens",
            )
        answer = await gw.keeper.invoke(describe, {}, None, credential=f"Bearer {access_token}")
        expires_at = datetime.fromisoformat(answer.json()["expires_at"].replace("Z", "+00:00"))
        max_age = math.ceil((expires_at - datetime.now(UTC)).total_seconds())
        if max_age <= 0:
            raise unknown_credential("the token has expired; sign in again")
        response = Response(status_code=303, headers={"Location": APP + (flow["x"] or "/")})
        response.headers.append("Set-Cookie", session_cookie(request, gw, access_token, max_age))
        response.headers.append("Set-Cookie", _flow_cookie(request, gw, "", 0))
        return response

    return finish_oidc_sign_in


OIDC_ROUTES = {
    "list_identity_providers": _list,
    "start_oidc_sign_in": _start,
    "finish_oidc_sign_in": _finish,
}

__all__ = ["FLOW_COOKIE", "OIDC_ROUTES"]
