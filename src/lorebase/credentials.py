"""Credentials: what is stored of a key, and the key a request presents.

A key is stored only as the SHA-256 hex digest of its text (`key_digest`). A request presents it as
`Authorization: Bearer <key>` (`presented_digest`: the digest to look up, or 401). Every service
that authenticates a caller — keeper for Domain data and for agent memory, feed for the memory
journal — reads the header with these two functions, so a credential means the same everywhere.
"""

from __future__ import annotations

import hashlib

from lorebase.problems import Problem


def key_digest(key: str) -> str:
    """What is stored of a credential: the SHA-256 hex digest of its text."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def presented_digest(authorization: str | None) -> str:
    """The digest of the key an `Authorization: Bearer <key>` header presents; 401 without one."""
    if not authorization:
        raise Problem(401, "unauthenticated", "send a credential as 'Authorization: Bearer <key>'")
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Problem(401, "unauthenticated", "the Authorization header must be 'Bearer <key>'")
    return key_digest(key.strip())


def unknown_credential() -> Problem:
    """The 401 of a key that is unknown or revoked."""
    return Problem(401, "unauthenticated", "the credential is unknown or revoked; ask for a new key")


__all__ = ["key_digest", "presented_digest", "unknown_credential"]
