"""Memory commands: create, derive, update, delete, attach_embedding and review.

Each command runs as one transaction (synchronous_commit on): the idempotency key is locked and its
receipt checked; the record is changed; the integrity index entry, the journal entry (sequence
assigned under the journal's row lock, lorebase_store.memory_journal) and the receipt are written;
then everything commits together. A rejected or conflicted command raises before anything is
written, so it leaves no receipt, no record change and no journal entry.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from typing import Any

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.ids import new_id, utc_now
from lorebase.memory import Namespace, Scope, chain_digest, cursor_document, genesis_digest, parse_scope
from lorebase.memory.access import MemoryCaller, capabilities, require
from lorebase.problems import Problem
from lorebase_keeper.memory_records import (
    REVIEW_DECISIONS,
    content_member,
    embedding_digest,
    embedding_member,
    invalid,
    issue,
    record_document,
    record_scope,
    revision_member,
    state_digest,
    unknown_members,
    valid_until_member,
)
from lorebase_keeper.outcome import Outcome
from lorebase_keeper.runtime import Runtime
from lorebase_store import JournalEntryRow, MemoryReceipt, MemoryRecordRow, Txn

SCHEMA_VERSION = 1
IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")
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

    @property
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
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
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


async def run_command(rt: Runtime, caller: MemoryCaller, command: Command) -> Outcome:
    return await rt.db.run_interaction(f"memory_{command.name}", _command_txn, caller, command)


async def _command_txn(txn: Txn, caller: MemoryCaller, command: Command) -> Outcome:
    await txn.synchronous_commit()
    await txn.lock_memory_key(caller.tenant, caller.id, command.key)
    receipt = await txn.get_memory_receipt(caller.tenant, caller.id, command.key)
    if receipt is not None:
        if receipt.command != command.name or receipt.request_digest != command.digest:
            raise Problem(
                422,
                "idempotency-key-reused",
                f"the idempotency key {command.key!r} was used for another command ({receipt.command}); "
                "use a new key for a new command",
                idempotency_key=command.key,
            )
        document = dict(receipt.response)
        document["replayed"] = True
        return Outcome(receipt.status, document, None, {"Idempotent-Replayed": "true"})
    before: MemoryRecordRow | None = None
    kind: str | None
    if command.name in ("create", "derive"):
        after, kind = await _new_record(txn, caller, command), command.name + "d"
        status = 201
    else:
        assert command.record_id is not None
        before = await _writable_record(txn, caller, command.record_id)
        after, kind = _apply(before, caller, command)
        status = 200
    change = None
    if kind is not None:
        if before is not None:
            await txn.replace_memory_record(after)
        change = await _journal(txn, caller, after, kind, insert=before is None)
    document = {
        "command": command.name,
        "idempotency_key": command.key,
        "record": record_document(after, now_millis()),
        "change": change,
    }
    await txn.insert_memory_receipt(
        caller.tenant,
        caller.id,
        command.key,
        MemoryReceipt(command.name, command.digest, status, document),
        utc_now(),
    )
    return Outcome(status, document, None, {})


def _not_found(record_id: str) -> Problem:
    return Problem(
        404,
        "memory-not-found",
        f"no memory record {record_id!r} you may see; check the id and your memory grants",
        record_id=record_id,
    )


def _visible(row: MemoryRecordRow | None, caller: MemoryCaller) -> bool:
    if row is None or row.tenant != caller.tenant:
        return False
    return row.visibility == "shared" or row.subject == caller.id


async def _writable_record(txn: Txn, caller: MemoryCaller, record_id: str) -> MemoryRecordRow:
    row = await txn.get_memory_record(record_id, for_update=True)
    if row is None or not _visible(row, caller):
        raise _not_found(record_id)
    scope = record_scope(row)
    held = await capabilities(txn, caller, scope)
    if "memory_read" not in held and "memory_write" not in held:
        raise _not_found(record_id)  # a record of a scope the caller cannot see answers like a missing one
    await require(txn, caller, scope, "memory_write")
    return row


async def readable_record(txn: Txn, caller: MemoryCaller, record_id: str) -> MemoryRecordRow:
    row = await txn.get_memory_record(record_id)
    if row is None or not _visible(row, caller):
        raise _not_found(record_id)
    if "memory_read" not in await capabilities(txn, caller, record_scope(row)):
        raise _not_found(record_id)
    return row


async def _new_record(txn: Txn, caller: MemoryCaller, command: Command) -> MemoryRecordRow:
    spec = command.spec
    scope = Scope(**spec["scope"])
    await require(txn, caller, scope, "memory_write")
    derived_from: list[str] = spec.get("derived_from", [])
    if derived_from:
        sources = await txn.memory_records_by_ids(derived_from)
        now = now_millis()
        issues = []
        for i, source_id in enumerate(derived_from):
            row = sources.get(source_id)
            readable = row is not None and _visible(row, caller)
            if readable and row is not None:
                readable = "memory_read" in await capabilities(txn, caller, record_scope(row))
            if not readable or row is None:
                issues.append(
                    issue(
                        f"derived_from[{i}]", "memory.derived_from", f"{source_id} is no record you may read"
                    )
                )
            elif row.status == "deleted" or (
                row.valid_until_millis is not None and row.valid_until_millis <= now
            ):
                issues.append(
                    issue(f"derived_from[{i}]", "memory.derived_from", f"{source_id} is deleted or expired")
                )
        if issues:
            raise invalid(issues)
    namespace = scope.namespace(caller.tenant, caller.id)
    at = now_millis()
    return MemoryRecordRow(
        id=new_id("mem"),
        namespace_key=namespace.key,
        tenant=caller.tenant,
        project_id=scope.project_id,
        mission_id=scope.mission_id,
        agent_id=scope.agent_id,
        visibility=scope.visibility,
        subject=namespace.subject,
        record_revision=1,
        status="active",
        content=spec["content"],
        content_digest=spec["content_digest"],
        derived_from=derived_from,
        valid_until_millis=spec["valid_until_millis"],
        embedding=None,
        review=None,
        created_by=caller.id,
        created_at_millis=at,
        updated_by=caller.id,
        updated_at_millis=at,
    )


def _unavailable(row: MemoryRecordRow, now: int) -> None:
    if row.status == "deleted":
        raise Problem(
            409, "memory-deleted", f"memory record {row.id} is deleted; create a new one", record_id=row.id
        )
    if row.valid_until_millis is not None and row.valid_until_millis <= now:
        raise Problem(
            409,
            "memory-expired",
            f"memory record {row.id} expired at {row.valid_until_millis}; create a new one",
            record_id=row.id,
        )


def _expect(row: MemoryRecordRow, expected: int | None) -> None:
    if expected is not None and expected != row.record_revision:
        raise Problem(
            409,
            "record-revision-mismatch",
            f"memory record {row.id} is at record_revision {row.record_revision}, not {expected}; "
            "read it again and retry with its current record_revision",
            record_id=row.id,
            record_revision=row.record_revision,
        )


def _apply(
    row: MemoryRecordRow, caller: MemoryCaller, command: Command
) -> tuple[MemoryRecordRow, str | None]:
    """The record after a command on it, and the journal kind (None: nothing changed, no event)."""
    spec, now = command.spec, now_millis()
    if command.name == "delete":
        if row.status == "deleted":
            raise Problem(
                409, "memory-deleted", f"memory record {row.id} is deleted already", record_id=row.id
            )
        _expect(row, spec["record_revision"])
        changed = dataclasses.replace(
            row,
            record_revision=row.record_revision + 1,
            status="deleted",
            content=None,
            content_digest=None,
            embedding=None,
            updated_by=caller.id,
            updated_at_millis=now,
        )
        return changed, "deleted"
    _unavailable(row, now)
    _expect(row, spec["record_revision"])
    if command.name == "update":
        values: dict[str, Any] = {
            "record_revision": row.record_revision + 1,
            "updated_by": caller.id,
            "updated_at_millis": now,
        }
        if "content" in spec:
            values["content"], values["content_digest"] = spec["content"], spec["content_digest"]
        if "valid_until_millis" in spec:
            values["valid_until_millis"] = spec["valid_until_millis"]
        return dataclasses.replace(row, **values), "updated"
    if command.name == "attach_embedding":
        digest = embedding_digest(spec["model"], spec["vector"], row.record_revision)
        if row.embedding is not None and row.embedding.get("digest") == digest:
            return row, None  # an identical binding: a receipt, no event
        embedding = {
            "model": spec["model"],
            "dimensions": len(spec["vector"]),
            "vector": spec["vector"],
            "record_revision": row.record_revision,
            "digest": digest,
        }
        return dataclasses.replace(row, embedding=embedding), "embedding_attached"
    if command.name == "review":
        review = {
            "decision": spec["decision"],
            "reason": spec["reason"],
            "reviewer": caller.id,
            "record_revision": row.record_revision,
            "reviewed_at_millis": now,
        }
        return dataclasses.replace(row, review=review), "reviewed"
    raise AssertionError(command.name)


async def _journal(
    txn: Txn, caller: MemoryCaller, row: MemoryRecordRow, kind: str, *, insert: bool
) -> dict[str, Any]:
    """Append the journal entry of a change (and its integrity index entry); insert a new record."""
    scope = record_scope(row)
    namespace = Namespace(row.tenant, scope, row.subject)
    journal_id = new_id("jrn")
    columns = {
        "tenant": row.tenant,
        "project_id": scope.project_id,
        "mission_id": scope.mission_id,
        "agent_id": scope.agent_id,
        "visibility": scope.visibility,
        "subject": row.subject,
    }
    journal = await txn.lock_memory_journal(
        namespace.key, journal_id, genesis_digest(journal_id), columns, utc_now()
    )
    if insert:
        await txn.insert_memory_record(row)
    if kind == "reviewed":
        review = row.review or {}
        await txn.insert_memory_review(
            row.id,
            row.record_revision,
            review["decision"],
            review["reason"],
            caller.id,
            review["reviewed_at_millis"],
        )
    sequence = journal.last_sequence + 1
    committed = now_millis()  # under the journal lock: committed_at_millis only grows within a journal
    state = state_digest(row)
    change = sha256_hex(
        canonical_json(
            {
                "journal_id": journal.id,
                "sequence": sequence,
                "kind": kind,
                "record_id": row.id,
                "record_revision": row.record_revision,
                "author": caller.id,
                "committed_at_millis": committed,
                "state": state,
            }
        )
    )
    entry = JournalEntryRow(
        journal_id=journal.id,
        sequence=sequence,
        schema_version=SCHEMA_VERSION,
        kind=kind,
        record_id=row.id,
        record_revision=row.record_revision,
        author=caller.id,
        committed_at_millis=committed,
        change_digest=change,
        chain_digest=chain_digest(journal.last_chain, sequence, change),
    )
    await txn.append_memory_entry(journal, entry)
    await txn.upsert_memory_integrity(row.id, journal.id, row.record_revision, state, sequence)
    return {"kind": kind, "cursor": cursor_document(journal.id, sequence, None, 1)}


__all__ = ["COMMANDS", "Command", "parse_command", "readable_record", "run_command"]
