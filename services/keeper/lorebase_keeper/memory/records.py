"""Memory records as documents, the checks of their content, and the digests the journal and
integrity index keep."""

from __future__ import annotations

from typing import Any

import orjson

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.memory import Scope
from lorebase.problems import Problem
from lorebase_store import MemoryRecordRow


def issue(path: str, rule: str, message: str) -> dict[str, str]:
    return {"path": path, "rule": rule, "message": message}


def invalid(issues: list[dict[str, str]]) -> Problem:
    return Problem(422, "validation-failed", "; ".join(i["message"] for i in issues), issues=issues)


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


def content_digest(content: Any, max_bytes: int, issues: list[dict[str, str]]) -> str | None:
    """The digest of a command's content (its model let any JSON value through): an issue for null,
    for an integer no JSON column or answer can carry, and for content over `max_bytes`
    (memory.max_content_bytes) as canonical JSON."""
    if content is None:
        issues.append(issue("content", "required", "content is required: any JSON value but null"))
        return None
    try:
        orjson.dumps(content)  # what the store and the answers write
    except TypeError:
        issues.append(
            issue("content", "memory.content", "content holds an integer beyond 64 bits; send it as a string")
        )
        return None
    encoded = canonical_json(content)
    if len(encoded) > max_bytes:
        issues.append(
            issue(
                "content",
                "memory.content",
                f"content is {len(encoded)} bytes, over {max_bytes} (memory.max_content_bytes)",
            )
        )
    return sha256_hex(encoded)


def embedding_digest(model: str, vector: list[float], record_revision: int) -> str:
    return sha256_hex(
        canonical_json(
            {"model": model, "vector": [repr(x) for x in vector], "record_revision": record_revision}
        )
    )


__all__ = [
    "availability",
    "content_digest",
    "embedding_digest",
    "invalid",
    "issue",
    "record_document",
    "record_scope",
    "state_digest",
]
