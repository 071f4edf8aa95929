"""What a write answers, and idempotent replays of earlier answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.problems import Problem
from lorebase_store import Receipt


@dataclass(frozen=True)
class Outcome:
    """What the gateway sends: status, document, extra headers."""

    status: int
    document: dict[str, Any]
    revision: str | None
    headers: dict[str, str]


def idempotency_key(in_body: str | None, header: str) -> str | None:
    """The idempotency key of a write: the body's (checked by its model), else the Idempotency-Key
    header's (None: neither). The header is checked at the edge; a gRPC caller's is checked here."""
    if in_body is not None:
        return in_body
    if len(header) > 255:
        raise Problem(
            422,
            "validation-failed",
            "an idempotency key has 1 to 255 characters",
            issues=[{"path": "idempotency_key", "rule": "length", "message": "1 to 255 characters"}],
        )
    return header or None


def request_digest(request: dict[str, Any]) -> str:
    """The digest an idempotency receipt keeps of the request it answered."""
    return sha256_hex(canonical_json(request))


def replay(receipt: Receipt, digest: str, key: str) -> Outcome:
    """The original answer of a request retried under its idempotency key (another request: 422)."""
    if receipt.request_digest != digest:
        raise Problem(
            422,
            "idempotency-key-reused",
            f"the idempotency key {key!r} was used for another request; use a new key for new parameters",
            idempotency_key=key,
        )
    document = dict(receipt.response)
    document["replayed"] = True
    return Outcome(receipt.status, document, receipt.revision, {"Idempotent-Replayed": "true"})


def check_expected_head(expected: str | None, branch: str, head: str | None) -> None:
    """409 stale-head when the caller named an `expected_head` the branch has moved from."""
    if expected is not None and expected != head:
        raise Problem(
            409,
            "stale-head",
            f"branch {branch!r} moved: its head is {head}, not the expected {expected}; "
            "read again and retry with the new head",
            branch=branch,
            head=head,
            expected_head=expected,
        )


__all__ = ["Outcome", "check_expected_head", "idempotency_key", "replay", "request_digest"]
