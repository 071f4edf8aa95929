"""Revealing vault refs on the way out: one substitution every service applies to what it sends.

Stored data hold `{"$vault": "vlt_<hex>"}` where a vault value would be (docs/erasure.md). An answer
is rendered from stored data as JSON (orjson: `{"$vault":"vlt_…"}`) or as text (Markdown cells and
lines render a value with `str`: `{'$vault': 'vlt_…'}`), so the refs an answer holds can be found in
its bytes whatever surface built it. `substitute` replaces each with what the caller may see: the
value, `***` (no clearance), or `[erased]`. An answer without `$vault` in it is left alone after
one byte search, so nothing else pays for the vault.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

ERASED = "[erased]"
MASK = "***"
REF = "$vault"

_JSON_REF = re.compile(rb'\{"\$vault":"(vlt_[0-9a-f]{64})"\}')
_TEXT_REF = re.compile(rb"""\{\\?["']\$vault\\?["']: ?\\?["'](vlt_[0-9a-f]{64})\\?["']\}""")
_BARE_REF = re.compile(rb"vlt_[0-9a-f]{64}")


def is_ref(value: Any) -> bool:
    """A stored `{"$vault": <ref>}`."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(REF), str)


def holds_refs(body: bytes) -> bool:
    """Whether `body` may hold a ref: every written form of one (JSON, escaped JSON, `str`) names
    `$vault`."""
    return b"$vault" in body


def refs_in(body: bytes) -> list[str]:
    """The refs named in `body`, each once."""
    return sorted({match.decode() for match in _BARE_REF.findall(body)})


def text_of(value: Any) -> str:
    """A value as a text surface writes it (Markdown cells, summaries)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def substitute(body: bytes, shown: Mapping[str, Any], *, json: bool) -> bytes:
    """`body` with every ref replaced by `shown[ref]` (a ref missing from `shown` as `[erased]`):
    a JSON value where the ref object is a JSON value, else its text (escaped inside JSON)."""

    def show(ref: bytes) -> Any:
        return shown.get(ref.decode(), ERASED)

    def text(ref: bytes) -> bytes:
        written = text_of(show(ref)).encode()
        return orjson.dumps(written.decode())[1:-1] if json else written

    if json:
        body = _JSON_REF.sub(lambda m: orjson.dumps(show(m[1])), body)
    body = _TEXT_REF.sub(lambda m: text(m[1]), body)
    return _BARE_REF.sub(lambda m: text(m[0]), body)


__all__ = ["ERASED", "MASK", "REF", "holds_refs", "is_ref", "refs_in", "substitute", "text_of"]
