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


__all__ = ["WebSession"]
