"""The web app's settings (web)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase.settings_model.section import (
    Section,
)


class Web(Section, frozen=True):
    session_ttl_s: Annotated[float, Meta(gt=0, le=30 * 86400)]  # at most 30 days
    cookie_secure: Literal["auto", "always", "never"]
    root: str
