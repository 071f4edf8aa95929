"""Memory records as documents, their validation, and the digests the journal and integrity index keep."""

from __future__ import annotations

import math
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.memory import Scope
from lorebase.problems import Problem
from lorebase_store import MemoryRecordRow

MAX_VALID_UNTIL = 2**63 - 1
MAX_VECTOR = 4096
REVIEW_DECISIONS = ("approve", "reject", "request_changes")


def issue(path: str, rule: str, message: str) -> dict[str, str]:
    return {"path": path, "rule": rule, "message": message}


def invalid(issues: list[dict[str, str]]) -> Problem:
    return Problem(422, "validation-failed", "; ".join(i["message"] for i in issues), issues=issues)


def unknown_members(body: dict[str, Any], allowed: set[str]) -> list[dict[str, str]]:
    return [
        issue(m, "unknown_member", f"{m} is not a member of this command")
        for m in sorted(set(body) - allowed)
    ]


def record_scope(row: MemoryRecordRow) -> Scope:
    return Scope(row.project_id, row.mission_id, row.agent_id, row.visibility)


def availability(row: MemoryRecordRow, now_millis: int) -> str:
    """active, deleted, or expired (clock-driven: valid_until_millis has passed; no journal entry)."""
    if row.status == "deleted":
        return "deleted"
    if row.valid_until_millis is not None and row.valid_until_millis <= now_millis:
        return "expired"
    return "active"


def record_document(row: MemoryRecordRow, now_millis: int) -> dict[str, Any]:
    status = availability(row, now_millis)
    embedding = None
    if row.embedding is not None:
        embedding = {k: row.embedding[k] for k in ("model", "dimensions", "record_revision", "digest")}
    return {
        "record_id": row.id,
        "scope": record_scope(row).document(),
        "record_revision": row.record_revision,
        "status": status,
        "content": row.content if status == "active" else None,
        "content_digest": row.content_digest,
        "derived_from": list(row.derived_from),
        "valid_until_millis": row.valid_until_millis,
        "embedding": embedding,
        "review": row.review,
        "created_by": row.created_by,
        "created_at_millis": row.created_at_millis,
        "updated_by": row.updated_by,
        "updated_at_millis": row.updated_at_millis,
    }


def state_digest(row: MemoryRecordRow) -> str:
    """The integrity index's digest of a record's state (everything but who and when)."""
    embedding = None if row.embedding is None else row.embedding["digest"]
    return sha256_hex(
        canonical_json(
            {
                "record_id": row.id,
                "namespace": row.namespace_key,
                "record_revision": row.record_revision,
                "status": row.status,
                "content_digest": row.content_digest,
                "derived_from": row.derived_from,
                "valid_until_millis": row.valid_until_millis,
                "embedding": embedding,
                "review": row.review,
            }
        )
    )


def content_member(
    body: dict[str, Any], max_bytes: int, issues: list[dict[str, str]]
) -> tuple[Any, str | None]:
    content = body.get("content")
    if content is None:
        issues.append(issue("content", "required", "content is required: any JSON value but null"))
        return None, None
    try:
        encoded = canonical_json(content)
    except ValueError:
        issues.append(
            issue("content", "memory.content", "content holds a number JSON cannot carry (NaN, inf)")
        )
        return None, None
    if len(encoded) > max_bytes:
        issues.append(
            issue(
                "content",
                "memory.content",
                f"content is {len(encoded)} bytes, over {max_bytes} (memory.max_content_bytes)",
            )
        )
    return content, sha256_hex(encoded)


def valid_until_member(body: dict[str, Any], issues: list[dict[str, str]]) -> int | None:
    value = body.get("valid_until_millis")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_VALID_UNTIL:
        issues.append(
            issue(
                "valid_until_millis",
                "memory.valid_until",
                "valid_until_millis is null or milliseconds since 1970",
            )
        )
        return None
    return value


def revision_member(body: dict[str, Any], issues: list[dict[str, str]], *, required: bool) -> int | None:
    value = body.get("record_revision")
    if value is None:
        if required:
            issues.append(
                issue(
                    "record_revision", "required", "record_revision (the revision you last read) is required"
                )
            )
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        issues.append(issue("record_revision", "memory.revision", "record_revision is a positive integer"))
        return None
    return value


def _finite(x: float) -> bool:
    try:
        return math.isfinite(float(x))
    except OverflowError:  # an integer too large for a float
        return False


def embedding_member(body: dict[str, Any], issues: list[dict[str, str]]) -> tuple[str, list[float]]:
    model = body.get("model")
    vector = body.get("vector")
    if not isinstance(model, str) or not 1 <= len(model) <= 200:
        issues.append(
            issue("model", "memory.embedding", "model names the embedding model (1-200 characters)")
        )
        model = ""
    ok = (
        isinstance(vector, list)
        and 1 <= len(vector) <= MAX_VECTOR
        and all(isinstance(x, int | float) and not isinstance(x, bool) and _finite(x) for x in vector)
    )
    if not ok or not isinstance(vector, list):
        issues.append(issue("vector", "memory.embedding", f"vector is 1-{MAX_VECTOR} finite numbers"))
        return str(model), []
    return str(model), [float(x) for x in vector]


def embedding_digest(model: str, vector: list[float], record_revision: int) -> str:
    return sha256_hex(
        canonical_json(
            {"model": model, "vector": [repr(x) for x in vector], "record_revision": record_revision}
        )
    )


__all__ = [
    "REVIEW_DECISIONS",
    "availability",
    "content_member",
    "embedding_digest",
    "embedding_member",
    "invalid",
    "issue",
    "record_document",
    "record_scope",
    "revision_member",
    "state_digest",
    "unknown_members",
    "valid_until_member",
]
