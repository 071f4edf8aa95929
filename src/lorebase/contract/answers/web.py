"""What the web app's sign-in answers (lorebase.contract.web; keeper's admin/web_sessions.py)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from lorebase.contract.documents import Answer, Timestamp


class WebSession(Answer, kw_only=True):
    """A web session: who it authenticates as, until when, and the CSRF token its writes carry."""

    principal: str
    principal_type: Annotated[str, Meta(description="user or service")]
    admin: Annotated[bool, Meta(description="Whether the principal is the admin principal")]
    expires_at: Timestamp
    csrf_token: Annotated[
        str, Meta(description="Send it as X-CSRF-Token on every write made with the session's cookie")
    ]


class IdentityProvider(Answer, kw_only=True):
    """An identity provider the web app offers a sign-in with ("Sign in with <label>")."""

    id: Annotated[str, Meta(description="Its id in the sign-in URL")]
    label: Annotated[str, Meta(description="What the button says after 'Sign in with'")]
    issuer: Annotated[str, Meta(description="The issuer (its `iss`)")]
    start: Annotated[str, Meta(description="Where the browser goes to sign in (add ?next=<app path>)")]


class IdentityProviders(Answer, kw_only=True):
    """The identity providers the web app offers besides the API key (none: the key alone)."""

    providers: list[IdentityProvider]


__all__ = ["IdentityProvider", "IdentityProviders", "WebSession"]
