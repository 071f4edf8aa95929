"""The web app's sign-in: an API key exchanged for a web session held in an HttpOnly cookie.

`POST /web/session` takes the key in its body (no Authorization header) and answers who signed in,
when the session ends and its CSRF token; the gateway sets the session's token as the
`lorebase_session` cookie (lorebase_gateway.web_session), never in the body, so the page's script
cannot read it. `GET` answers the same members for the session a request presents (its cookie or
`Authorization: Bearer <token>`), `DELETE` ends it and clears the cookie. docs/security.md says why.

"Sign in with <issuer>": the gateway runs the authorization code flow with PKCE against an identity
provider the settings offer to the web app (keeper.auth.oidc.issuers[].web), and ends it in the
same cookie, which then holds the provider's access token (lorebase_gateway.web_oidc).
`GET /web/identity-providers` lists them, `GET /web/oidc/{provider}/start` sends the browser to the
provider, and `GET /web/oidc/callback` is where it comes back.
"""

from __future__ import annotations

from typing import Annotated

from lorebase.contract import answers
from lorebase.contract._base import API, Body
from lorebase.contract.endpoint import Endpoint, Path, Query, Request
from lorebase.contract.fields import bounded, matching
from lorebase.contract.policy import anyone, web_session

SESSION = API + "/web/session"
OIDC = API + "/web/oidc"
CALLBACK = OIDC + "/callback"
ProviderId = Annotated[
    str, matching("[a-z0-9][a-z0-9-]{0,31}", "An identity provider's id (GET /web/identity-providers)")
]
# A path of the web app (under /app/) to open after sign-in; anything else opens its start page.
AppPath = Annotated[str, matching(r"(/([^/\\\x00-\x1f][^\\\x00-\x1f]{0,1023})?)?", "A path of the web app")]
OAuthValue = Annotated[str, bounded(4096, "")]


class SignIn(Body, frozen=True, kw_only=True):
    key: Annotated[str, bounded(8192, "An API key of the principal signing in", min_length=1)]


class StartWebSession(Request, frozen=True, kw_only=True):
    body: SignIn


class WebSessionCall(Request, frozen=True, kw_only=True):
    pass


class ListIdentityProviders(Request, frozen=True, kw_only=True):
    pass


class StartOidcSignIn(Request, frozen=True, kw_only=True):
    provider: Annotated[ProviderId, Path]
    next: Annotated[AppPath, Query] = ""


class FinishOidcSignIn(Request, frozen=True, kw_only=True):
    """What the identity provider sends the browser back with (RFC 6749 4.1.2 and 4.1.2.1)."""

    code: Annotated[OAuthValue, Query] = ""
    state: Annotated[OAuthValue, Query] = ""
    error: Annotated[OAuthValue, Query] = ""
    error_description: Annotated[OAuthValue, Query] = ""


_COOKIE = (
    "The session's token travels only in the `lorebase_session` cookie (HttpOnly, SameSite=Strict, "
    "Path=/, Max-Age the session's lifetime, Secure over TLS). A request with that cookie and no "
    "Authorization header authenticates as the session; its writes (POST, PUT, PATCH, DELETE) carry "
    "`X-CSRF-Token: <csrf_token>` and, when they send an Origin, the gateway's own."
)

ENDPOINTS = [
    Endpoint(
        "start_web_session",
        "POST",
        SESSION,
        "keeper",
        "StartWebSession",
        StartWebSession,
        "Sign in to the web app: exchange an API key for a session cookie",
        "web",
        policy=anyone(),
        traced=False,
        description=_COOKIE + " A key that is unknown, revoked or itself a web session answers 401 and "
        "starts nothing. The session lasts `web.session_ttl_s`.",
        success=201,
        no_store=True,
        response=answers.web.WebSession,
    ),
    Endpoint(
        "get_web_session",
        "GET",
        SESSION,
        "keeper",
        "GetWebSession",
        WebSessionCall,
        "The web session the request presents",
        "web",
        policy=web_session(),
        traced=False,
        description="401 when the cookie is missing, or its session expired, ended or was revoked "
        "with its key.",
        no_store=True,
        response=answers.web.WebSession,
    ),
    Endpoint(
        "end_web_session",
        "DELETE",
        SESSION,
        "keeper",
        "EndWebSession",
        WebSessionCall,
        "Sign out: end the web session and clear its cookie",
        "web",
        policy=web_session(),
        clears_cache=True,
        traced=False,
        description="204; the session stops authenticating at once, and the answer clears the cookie "
        "(Max-Age=0) whatever the session's state.",
        success=204,
        no_store=True,
        media_types=(),  # 204: no body
    ),
    Endpoint(
        "list_identity_providers",
        "GET",
        API + "/web/identity-providers",
        "gateway",
        "",
        ListIdentityProviders,
        "The identity providers the web app offers a sign-in with",
        "web",
        policy=anyone(),
        traced=False,
        description="Those of `keeper.auth.oidc.issuers` with a `web` client, in their order; empty "
        "when none is: the web app then offers the API key alone.",
        response=answers.web.IdentityProviders,
    ),
    Endpoint(
        "start_oidc_sign_in",
        "GET",
        OIDC + "/{provider}/start",
        "gateway",
        "",
        StartOidcSignIn,
        "Sign in to the web app through an identity provider: go there",
        "web",
        policy=anyone(),
        traced=False,
        description="302 to the provider's authorization endpoint (authorization code with PKCE, S256), "
        "with a fresh `state` and `nonce` kept, with the PKCE verifier and `next`, in the short-lived "
        "HttpOnly cookie `lorebase_oidc` (SameSite=Lax, Path=/api/v1/web/oidc, 10 minutes). 404 for a "
        "provider the settings do not offer to the web app.",
        success=302,
        no_store=True,
        media_types=(),
    ),
    Endpoint(
        "finish_oidc_sign_in",
        "GET",
        CALLBACK,
        "gateway",
        "",
        FinishOidcSignIn,
        "Sign in to the web app through an identity provider: its answer",
        "web",
        policy=anyone(),
        traced=False,
        description="The redirect URI of the web clients. The `state` must be the one of the "
        "`lorebase_oidc` cookie (else 400 `sign-in-state-mismatch`, which also refuses a sign-in the "
        "browser did not start); the code is exchanged with the PKCE verifier (and the client secret "
        "of a confidential client); the ID token must verify (the issuer's keys, `aud` the web client, "
        "the `nonce` sent) and the access token too, exactly as every request's token is: an untrusted "
        "issuer or tenant, an expired token or another audience is 401 and signs nobody in. Then 303 "
        "to the web app (`next`), with the session cookie of `POST /web/session` holding the access "
        "token: the session lasts as long as the token, and sign-out ends the token in Lorebase.",
        success=303,
        problems=(400,),
        no_store=True,
        media_types=(),
    ),
]

__all__ = [
    "CALLBACK",
    "ENDPOINTS",
    "OIDC",
    "SESSION",
    "FinishOidcSignIn",
    "ListIdentityProviders",
    "SignIn",
    "StartOidcSignIn",
    "StartWebSession",
    "WebSessionCall",
]
