"""Memory commands: create, derive, update, delete, attach_embedding and review.

A command is validated here, then runs in a group of the commands on its journal: one transaction
(synchronous_commit on) that locks the idempotency keys and the journal row, checks each command
in turn and writes the records, journal entries, integrity index entries and receipts of the
accepted ones together (commit.py: MemoryCommitter.run, plan.py). A rejected or conflicted
command raises before it plans anything, so it leaves no receipt, no record change and no journal
entry.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.memory import parse_scope
from lorebase.memory.access import MemoryCaller, capabilities
from lorebase.problems import Problem
from lorebase_keeper.memory.records import (
    REVIEW_DECISIONS,
    content_member,
    embedding_member,
    invalid,
    issue,
    record_scope,
    revision_member,
    unknown_members,
    valid_until_member,
)
from lorebase_store import MemoryRecordRow, Txn

IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
MAX_DERIVED_FROM = 64
COMMANDS = ("create", "derive", "update", "delete", "attach_embedding", "review")


def now_millis() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Command:
    name: str
    record_id: str | None
    spec: dict[str, Any]
    key: str

    @cached_property
    def digest(self) -> str:
        return sha256_hex(
            canonical_json({"command": self.name, "record_id": self.record_id, "spec": self.spec})
        )


def parse_command(
    name: str, body: dict[str, Any], record_id: str | None, header_key: str, max_content_bytes: int
) -> Command:
    """Validate a command body; 422 naming every member to change."""
    issues: list[dict[str, str]] = []
    key = body.get("idempotency_key", header_key or None)
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.fullmatch(key):
        issues.append(
            issue(
                "idempotency_key",
                "required",
                "idempotency_key (or the Idempotency-Key header) is required: 1-255 visible ASCII characters",
            )
        )
    spec: dict[str, Any] = {}
    common = {"idempotency_key"}
    if name in ("create", "derive"):
        allowed = (
            common
            | {"scope", "content", "valid_until_millis"}
            | ({"derived_from"} if name == "derive" else set())
        )
        issues += unknown_members(body, allowed)
        try:
            spec["scope"] = parse_scope(body.get("scope"), status=422).document()
        except Problem as problem:
            issues += problem.extra.get("issues", [])
        spec["content"], spec["content_digest"] = content_member(body, max_content_bytes, issues)
        spec["valid_until_millis"] = valid_until_member(body, issues)
        if name == "derive":
            sources = body.get("derived_from")
            if (
                not isinstance(sources, list)
                or not 1 <= len(sources) <= MAX_DERIVED_FROM
                or not all(isinstance(s, str) and s for s in sources)
                or len(set(sources)) != len(sources)
            ):
                issues.append(
                    issue(
                        "derived_from",
                        "memory.derived_from",
                        f"derived_from is 1-{MAX_DERIVED_FROM} distinct record ids",
                    )
                )
            else:
                spec["derived_from"] = list(sources)
    elif name == "update":
        issues += unknown_members(body, common | {"record_revision", "content", "valid_until_millis"})
        spec["record_revision"] = revision_member(body, issues, required=True)
        if "content" not in body and "valid_until_millis" not in body:
            issues.append(issue("content", "required", "an update sets content, valid_until_millis or both"))
        if "content" in body:
            spec["content"], spec["content_digest"] = content_member(body, max_content_bytes, issues)
        if "valid_until_millis" in body:
            spec["valid_until_millis"] = valid_until_member(body, issues)
    elif name == "delete":
        issues += unknown_members(body, common | {"record_revision"})
        spec["record_revision"] = revision_member(body, issues, required=False)
    elif name == "attach_embedding":
        issues += unknown_members(body, common | {"record_revision", "model", "vector"})
        spec["record_revision"] = revision_member(body, issues, required=True)
        spec["model"], spec["vector"] = embedding_member(body, issues)
    elif name == "review":
        issues += unknown_members(body, common | {"record_revision", "decision", "reason"})
        spec["record_revision"] = revision_member(body, issues, required=False)
        decision, reason = body.get("decision"), body.get("reason")
        if decision not in REVIEW_DECISIONS:
            issues.append(
                issue("decision", "memory.review", f"decision is one of {', '.join(REVIEW_DECISIONS)}")
            )
        if not isinstance(reason, str) or not reason.strip() or len(reason) > 2000:
            issues.append(issue("reason", "memory.review", "reason is 1-2000 characters saying why"))
        spec["decision"], spec["reason"] = decision, reason
    else:  # pragma: no cover - the servicer only passes COMMANDS
        raise AssertionError(name)
    if issues:
        raise invalid(issues)
    return Command(name, record_id, spec, str(key))


def not_found(record_id: str) -> Problem:
    return Problem(
        404,
        "memory-not-found",
        f"no memory record {record_id!r} you may see; check the id and your memory grants",
        record_id=record_id,
    )


def visible(row: MemoryRecordRow, caller: MemoryCaller) -> bool:
    """Whether the record is in the caller's tenant and, when private, the caller's own."""
    if row.tenant != caller.tenant:
        return False
    return row.visibility == "shared" or row.subject == caller.id


async def readable_record(txn: Txn, caller: MemoryCaller, record_id: str) -> MemoryRecordRow:
    row = await txn.get_memory_record(record_id)
    if row is None or not visible(row, caller):
        raise not_found(record_id)
    if "memory_read" not in await capabilities(txn, caller, record_scope(row)):
        raise not_found(record_id)
    return row


__all__ = [
    "COMMANDS",
    "Command",
    "not_found",
    "now_millis",
    "parse_command",
    "readable_record",
    "visible",
]
