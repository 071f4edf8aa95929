"""Opaque paging cursors: a small JSON value, base64url-encoded; a cursor this API did not hand out
is 400 invalid-cursor. A cursor is fully validated before use: its shape by the caller's validator,
and every number in it within the range a database column can hold (a forged offset of 2**63 would
otherwise reach SQL)."""

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
    if value is None or not _bounded(value) or not valid(value):
        raise Problem(400, "invalid-cursor", "cursor is not one this API returned; start again without it")
    return value


_LIMIT = 2**53  # the integers a cursor carries are sequences and generations, far below


def _bounded(value: Any) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):
        return -_LIMIT <= value <= _LIMIT
    if isinstance(value, float):
        return False
    if isinstance(value, list):
        return len(value) <= 16 and all(_bounded(item) for item in value)
    if isinstance(value, dict):
        return len(value) <= 16 and all(_bounded(item) for item in value.values())
    return False


def pair_of(kind: type) -> Callable[[Any], bool]:
    """A validator for a cursor holding two values of one type."""
    return lambda v: (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, kind) and not isinstance(x, bool) for x in v)
    )


__all__ = ["decode_cursor", "encode_cursor", "pair_of"]
