"""Opaque paging cursors: a small JSON value, base64url-encoded; a cursor this API did not hand out
is 400 invalid-cursor."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson

from lorebase.problems import Problem


def encode_cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(value)).decode().rstrip("=")


def decode_cursor(cursor: str, valid: Callable[[Any], bool]) -> Any:
    """The value of a cursor, when `valid` accepts it."""
    try:
        value = orjson.loads(base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        value = None
    if value is None or not valid(value):
        raise Problem(400, "invalid-cursor", "cursor is not one this API returned; start again without it")
    return value


def pair_of(kind: type) -> Callable[[Any], bool]:
    """A validator for a cursor holding two values of one type."""
    return lambda v: (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, kind) and not isinstance(x, bool) for x in v)
    )


__all__ = ["decode_cursor", "encode_cursor", "pair_of"]
