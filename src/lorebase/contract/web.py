"""The web app's sign-in: an API key exchanged for a web session held in an HttpOnly cookie.

`POST /web/session` takes the key in its body (no Authorization header) and answers who signed in,
when the session ends and its CSRF token; the gateway sets the session's token as the
`lorebase_session` cookie (lorebase_gateway.web_session), never in the body, so the page's script
cannot read it. `GET` answers the same members for the session a request presents (its cookie or
`Authorization: Bearer <token>`), `DELETE` ends it and clears the cookie. docs/security.md says why.
"""

from __future__ import annotations

from typing import Annotated

from lorebase.contract import answers
from lorebase.contract._base import API, Body
from lorebase.contract.endpoint import Endpoint, Request
from lorebase.contract.fields import bounded
from lorebase.contract.policy import anyone, web_session

SESSION = API + "/web/session"


class SignIn(Body, frozen=True, kw_only=True):
    key: Annotated[str, bounded(8192, "An API key of the principal signing in", min_length=1)]


class StartWebSession(Request, frozen=True, kw_only=True):
    body: SignIn


class WebSessionCall(Request, frozen=True, kw_only=True):
    pass


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
]

__all__ = ["ENDPOINTS", "SESSION", "SignIn", "StartWebSession", "WebSessionCall"]
