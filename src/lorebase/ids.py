"""Identifiers: a prefix naming what it is and a time-ordered random part (ULID-like, Crockford base32)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _encode(number: int, length: int) -> str:
    out = []
    for _ in range(length):
        number, digit = divmod(number, 32)
        out.append(_ALPHABET[digit])
    return "".join(reversed(out))


def new_id(prefix: str) -> str:
    """`prefix_` + 10 characters of milliseconds + 16 random characters, sortable by creation time."""
    millis = int(time.time() * 1000)
    return f"{prefix}_{_encode(millis, 10)}{_encode(int.from_bytes(os.urandom(10), 'big'), 16)}"


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(at: datetime) -> str:
    """RFC 3339 in UTC with a Z, microseconds only when present."""
    text = at.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")


def iso_seconds(at: datetime) -> str:
    return at.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


__all__ = ["iso", "iso_seconds", "new_id", "utc_now"]
