"""Resolve's word levels without a database: the supply example's schema as a caller sees it,
grounded by the levels that read no data (lorebase_keeper/reads/resolve/phrases.py)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.access.auth import Access, Principal
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.resolve.ground import ordered
from lorebase_keeper.reads.resolve.phrases import phrases
from lorebase_keeper.reads.resolve.vocabulary import Vocabulary, names_vocabulary
from lorebase_keeper.reads.resolve.words import tokens

from lorebase.config import Settings
from lorebase.credentials import ADMIN_PRINCIPAL
from lorebase.schema import load_schema, parse_yaml
from lorebase_store import DomainRow
from lorebase_store.principals import GrantRow

ROOT = Path(__file__).resolve().parents[2]
# as the integration stack sends it (yaml, then JSON)
SUPPLY = json.loads(json.dumps(parse_yaml((ROOT / "examples" / "supply" / "schema.yaml").read_text())))
TODAY = date(2026, 10, 15)


def domain(schema: str | dict[str, Any] = SUPPLY, language: str = "en") -> Domain:
    parsed = load_schema(schema)
    row = DomainRow(1, "supply", "main", parsed.document, {}, datetime(2026, 1, 1, tzinfo=UTC))
    settings = Settings().overlay({"read": {"resolve": {"language": language}}})
    return Domain(1, "supply", "main", parsed, settings, row)


def access(kinds: tuple[str, ...] | None = None) -> Access:
    if kinds is None:
        return Access(Principal(ADMIN_PRINCIPAL, "user", "admin"), ())
    grant = GrantRow("g1", 1, "usr_reader", "viewer", ("*",), kinds)
    return Access(Principal("usr_reader", "user", "reader"), (grant,))


def vocabulary(found: Domain, caller: Access) -> Vocabulary:
    kinds = list(readable_view(caller, found, "main").kinds)
    return names_vocabulary(caller, found, "main", kinds)


def ground(
    text: str,
    kinds: tuple[str, ...] | None = None,
    today: date = TODAY,
    schema: str | dict[str, Any] = SUPPLY,
    language: str = "en",
) -> dict[str, Any]:
    """What the word levels answer for `text`: candidates (ordered), hints and unmatched words."""
    found = domain(schema, language)
    vocab = vocabulary(found, access(kinds))
    words = tokens(text, language)
    used = [False] * len(words)
    candidates, hints = phrases(words, used, vocab, found, today)
    return {
        "candidates": ordered(candidates),
        "hints": hints,
        "unmatched": [w.key for w, u in zip(words, used, strict=True) if not u],
    }


def answer_bytes(text: str, kinds: tuple[str, ...] | None = None) -> bytes:
    return orjson.dumps(ground(text, kinds))


def named(body: dict[str, Any], target: str, **members: Any) -> list[dict[str, Any]]:
    return [
        c
        for c in body["candidates"]
        if c["target"] == target and all(c.get(k) == v for k, v in members.items())
    ]
