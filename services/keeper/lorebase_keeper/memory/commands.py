"""Memory commands: create, derive, update, delete, attach_embedding and review.

A command's body arrives decoded into its model (lorebase.contract.memory: members, types and
bounds); `command_of` adds what the model cannot say (the idempotency key from the body or the
header, content that is not null and fits memory.max_content_bytes, an update that changes
something, distinct derived_from). The command then runs in a group of the commands on its
journal: one transaction (synchronous_commit on) that locks the idempotency keys and the journal
row, checks each command in turn and writes the records, journal entries, integrity index entries
and receipts of the accepted ones together (commit.py: MemoryCommitter.run, plan.py). A rejected
or conflicted command raises before it plans anything, so it leaves no receipt, no record change
and no journal entry.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from msgspec import UNSET

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.contract.memory import (
    DerivedMemory,
    EmbeddingBinding,
    MemoryDeletion,
    MemoryReviewCommand,
    MemoryUpdate,
    NewMemory,
)
from lorebase.memory import Scope
from lorebase.memory.access import MemoryCaller, capabilities
from lorebase.problems import Problem
from lorebase_keeper.memory.records import content_digest, invalid, issue, record_scope
from lorebase_store import MemoryRecordRow, Txn

# The header's key (a gRPC caller's is not checked at the edge); the body's is its model's.
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
COMMANDS = ("create", "derive", "update", "delete", "attach_embedding", "review")
CommandBody = NewMemory | MemoryUpdate | MemoryDeletion | EmbeddingBinding | MemoryReviewCommand


def now_millis() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Command:
    """A checked command: its name, its record (None for create and derive), the idempotency key it
    runs under, its typed body, and what keeper derives from the body: the scope of a new record
    and the digest of the content it sets."""

    name: str
    record_id: str | None
    key: str
    body: CommandBody
    scope: Scope | None = None
    content_digest: str | None = None

    @property
    def derived_from(self) -> list[str]:
        return list(self.body.derived_from) if isinstance(self.body, DerivedMemory) else []

    @cached_property
    def digest(self) -> str:
        """The request digest its receipt keeps; a retry under the key must match it."""
        return sha256_hex(
            canonical_json({"command": self.name, "record_id": self.record_id, "spec": self._spec()})
        )

    def _spec(self) -> dict[str, Any]:
        """What the digest covers, member for member as before the bodies were typed (a retry of a
        command accepted then still finds its receipt)."""
        body = self.body
        if isinstance(body, NewMemory):
            assert self.scope is not None
            spec = {
                "scope": self.scope.document(),
                "content": body.content,
                "content_digest": self.content_digest,
                "valid_until_millis": body.valid_until_millis,
            }
            if isinstance(body, DerivedMemory):
                spec["derived_from"] = list(body.derived_from)
            return spec
        if isinstance(body, MemoryUpdate):
            spec = {"record_revision": body.record_revision}
            if body.content is not UNSET:
                spec["content"], spec["content_digest"] = body.content, self.content_digest
            if body.valid_until_millis is not UNSET:
                spec["valid_until_millis"] = body.valid_until_millis
            return spec
        if isinstance(body, EmbeddingBinding):
            return {"record_revision": body.record_revision, "model": body.model, "vector": list(body.vector)}
        if isinstance(body, MemoryReviewCommand):
            return {"record_revision": body.record_revision, "decision": body.decision, "reason": body.reason}
        return {"record_revision": body.record_revision}


def command_of(
    name: str, body: CommandBody, record_id: str | None, header_key: str, max_content_bytes: int
) -> Command:
    """The command of a decoded body, checked for what its model cannot say; 422 naming every member
    to change."""
    issues: list[dict[str, str]] = []
    key = body.idempotency_key if body.idempotency_key is not None else header_key
    if not IDEMPOTENCY_KEY.fullmatch(key):
        issues.append(
            issue(
                "idempotency_key",
                "required",
                "idempotency_key (or the Idempotency-Key header) is required: 1-255 visible ASCII characters",
            )
        )
    scope = digest = None
    if isinstance(body, NewMemory):
        scope = Scope.of(body.scope)
        digest = content_digest(body.content, max_content_bytes, issues)
        if isinstance(body, DerivedMemory) and len(set(body.derived_from)) != len(body.derived_from):
            issues.append(issue("derived_from", "memory.derived_from", "derived_from names a record twice"))
    elif isinstance(body, MemoryUpdate):
        if body.content is UNSET and body.valid_until_millis is UNSET:
            issues.append(issue("content", "required", "an update sets content, valid_until_millis or both"))
        if body.content is not UNSET:
            digest = content_digest(body.content, max_content_bytes, issues)
    if issues:
        raise invalid(issues)
    return Command(name, record_id, key, body, scope, digest)


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
    "CommandBody",
    "command_of",
    "not_found",
    "now_millis",
    "readable_record",
    "visible",
]
