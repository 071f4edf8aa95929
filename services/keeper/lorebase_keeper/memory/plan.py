"""Planning the memory commands of one group, in queue order, on one journal.

A `GroupPlan` holds what the group read under its locks (receipts, records, grants, the journal's
head) and, as each command is checked, what the commands before it planned. A command checks
everything first (its receipt, grants, the record's state, the expected revision) and raises a
Problem before it plans anything, so a rejected or conflicted command leaves no row, no receipt and
no journal entry; an accepted one appends its entry at the next sequence of the journal.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from msgspec import UNSET

from lorebase.canonical import canonical_json, sha256_hex
from lorebase.contract.memory import EmbeddingBinding, MemoryDeletion, MemoryUpdate, NewMemory
from lorebase.credentials import unknown_credential
from lorebase.ids import iso, new_id, utc_now
from lorebase.memory import CAPABILITIES, Namespace, Scope, chain_digest, cursor_document
from lorebase.memory.access import MemoryCaller, forbidden
from lorebase.problems import Problem
from lorebase_keeper.memory.commands import Command, not_found, now_millis, visible
from lorebase_keeper.memory.records import (
    embedding_digest,
    invalid,
    issue,
    record_document,
    record_scope,
    state_digest,
)
from lorebase_keeper.writes import Outcome
from lorebase_store import JournalRow, MemoryGroupState, MemoryReceipt, MemoryRecordRow, MemoryRows

SCHEMA_VERSION = 1
_RECORD_FIELDS = dataclasses.fields(MemoryRecordRow)


class Misrouted(Exception):
    """A record command reached the group of another journal than its record's (docs/memory.md)."""

    def __init__(self, record_id: str) -> None:
        super().__init__(record_id)
        self.record_id = record_id


class GroupPlan:
    def __init__(self, namespace: Namespace | None, journal: JournalRow | None, state: MemoryGroupState):
        self.namespace = namespace
        self.journal = journal
        self.state = state
        self.sequence = journal.last_sequence if journal else 0
        self.chain = journal.last_chain if journal else ""
        self._records: dict[str, tuple[MemoryRecordRow, bool]] = {}  # planned: (final state, is new)
        self._receipts: dict[tuple[str, str, str], MemoryReceipt] = {}
        self._integrity: dict[str, dict[str, Any]] = {}
        self._rows = MemoryRows()

    def rows(self) -> MemoryRows:
        """Everything the accepted commands write, with one final state per record."""
        rows = dataclasses.replace(self._rows, integrity=list(self._integrity.values()))
        for row, new in self._records.values():
            columns = {f.name: getattr(row, f.name) for f in _RECORD_FIELDS}
            (rows.new_records if new else rows.changed_records).append(columns)
        if self.journal is not None and self.sequence != self.journal.last_sequence:
            rows.heads = [{"id": self.journal.id, "last_sequence": self.sequence, "last_chain": self.chain}]
        return rows

    def run(self, caller: MemoryCaller, command: Command, digest: str) -> Outcome:
        """Check one command of the caller of key `digest` and plan its writes; a Problem leaves
        the plan as it was."""
        if self.state.keys.get(digest) != caller.id:
            raise unknown_credential()  # revoked since the caller was identified
        key = (caller.tenant, caller.id, command.key)
        receipt = self._receipts.get(key) or self.state.receipts.get(key)
        if receipt is not None:
            return _replay(receipt, command)
        before: MemoryRecordRow | None = None
        kind: str | None
        if command.name in ("create", "derive"):
            after, kind, status = self._new_record(caller, command), command.name + "d", 201
        else:
            assert command.record_id is not None
            before = self._writable_record(caller, command.record_id)
            (after, kind), status = _apply(before, caller, command), 200
        change = None
        if kind is not None:
            planned = self._records.get(after.id)
            self._records[after.id] = (after, before is None or (planned is not None and planned[1]))
            change = self._append(caller, after, kind)
        document = {
            "command": command.name,
            "idempotency_key": command.key,
            "record": record_document(after, now_millis()),
            "change": change,
        }
        self._receipts[key] = MemoryReceipt(command.name, command.digest, status, document)
        self._rows.receipts.append(
            {
                "tenant": caller.tenant,
                "principal": caller.id,
                "key": command.key,
                "command": command.name,
                "request_digest": command.digest,
                "status": status,
                "response": document,
                "created_at": iso(utc_now()),
            }
        )
        return Outcome(status, document, None, {})

    def _capabilities(self, caller: MemoryCaller, scope: Scope) -> set[str]:
        if caller.is_admin:
            return set(CAPABILITIES)
        return self.state.grants.get((caller.id, scope.project_id, scope.mission_id, scope.agent_id), set())

    def _require(self, caller: MemoryCaller, scope: Scope, capability: str) -> None:
        if capability not in self._capabilities(caller, scope):
            raise forbidden(caller, scope, capability)

    def _record(self, record_id: str) -> MemoryRecordRow | None:
        planned = self._records.get(record_id)
        return planned[0] if planned is not None else self.state.records.get(record_id)

    def _writable_record(self, caller: MemoryCaller, record_id: str) -> MemoryRecordRow:
        row = self._record(record_id)
        if row is None or not visible(row, caller):
            raise not_found(record_id)
        if self.namespace is None or row.namespace_key != self.namespace.key:
            raise Misrouted(record_id)
        scope = record_scope(row)
        held = self._capabilities(caller, scope)
        if "memory_read" not in held and "memory_write" not in held:
            raise not_found(record_id)  # a record of a scope the caller cannot see answers like a missing one
        self._require(caller, scope, "memory_write")
        return row

    def _new_record(self, caller: MemoryCaller, command: Command) -> MemoryRecordRow:
        body, scope = command.body, command.scope
        assert isinstance(body, NewMemory) and scope is not None
        self._require(caller, scope, "memory_write")
        derived_from = command.derived_from
        issues = []
        now = now_millis()
        for i, source_id in enumerate(derived_from):
            row = self._record(source_id)
            if row is None or not visible(row, caller):
                readable = False
            else:
                readable = "memory_read" in self._capabilities(caller, record_scope(row))
            if not readable or row is None:
                message = f"{source_id} is no record you may read"
                issues.append(issue(f"derived_from[{i}]", "memory.derived_from", message))
            elif row.status == "deleted" or (
                row.valid_until_millis is not None and row.valid_until_millis <= now
            ):
                message = f"{source_id} is deleted or expired"
                issues.append(issue(f"derived_from[{i}]", "memory.derived_from", message))
        if issues:
            raise invalid(issues)
        namespace = self.namespace
        assert namespace is not None and namespace == scope.namespace(caller.tenant, caller.id)
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
            content=body.content,
            content_digest=command.content_digest,
            derived_from=derived_from,
            valid_until_millis=body.valid_until_millis,
            embedding=None,
            review=None,
            created_by=caller.id,
            created_at_millis=at,
            updated_by=caller.id,
            updated_at_millis=at,
        )

    def _append(self, caller: MemoryCaller, row: MemoryRecordRow, kind: str) -> dict[str, Any]:
        """The journal entry of a change at the next sequence, its integrity index entry and review."""
        assert self.journal is not None
        journal_id = self.journal.id
        if kind == "reviewed":
            review = row.review or {}
            self._rows.reviews.append(
                {
                    "record_id": row.id,
                    "record_revision": row.record_revision,
                    "decision": review["decision"],
                    "reason": review["reason"],
                    "reviewer": caller.id,
                    "created_at_millis": review["reviewed_at_millis"],
                }
            )
        self.sequence += 1
        committed = now_millis()  # under the journal lock: committed_at_millis only grows within a journal
        state = state_digest(row)
        change = sha256_hex(
            canonical_json(
                {
                    "journal_id": journal_id,
                    "sequence": self.sequence,
                    "kind": kind,
                    "record_id": row.id,
                    "record_revision": row.record_revision,
                    "author": caller.id,
                    "committed_at_millis": committed,
                    "state": state,
                }
            )
        )
        self.chain = chain_digest(self.chain, self.sequence, change)
        self._rows.entries.append(
            {
                "journal_id": journal_id,
                "sequence": self.sequence,
                "schema_version": SCHEMA_VERSION,
                "kind": kind,
                "record_id": row.id,
                "record_revision": row.record_revision,
                "author": caller.id,
                "committed_at_millis": committed,
                "change_digest": change,
                "chain_digest": self.chain,
            }
        )
        self._integrity[row.id] = {
            "record_id": row.id,
            "journal_id": journal_id,
            "record_revision": row.record_revision,
            "state_digest": state,
            "last_sequence": self.sequence,
        }
        return {"kind": kind, "cursor": cursor_document(journal_id, self.sequence, None, 1)}


def _replay(receipt: MemoryReceipt, command: Command) -> Outcome:
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
    body, now = command.body, now_millis()
    if isinstance(body, MemoryDeletion):
        if row.status == "deleted":
            raise Problem(
                409, "memory-deleted", f"memory record {row.id} is deleted already", record_id=row.id
            )
        _expect(row, body.record_revision)
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
    assert not isinstance(body, NewMemory)
    _unavailable(row, now)
    _expect(row, body.record_revision)
    if isinstance(body, MemoryUpdate):
        values: dict[str, Any] = {
            "record_revision": row.record_revision + 1,
            "updated_by": caller.id,
            "updated_at_millis": now,
        }
        if body.content is not UNSET:
            values["content"], values["content_digest"] = body.content, command.content_digest
        if body.valid_until_millis is not UNSET:
            values["valid_until_millis"] = body.valid_until_millis
        return dataclasses.replace(row, **values), "updated"
    if isinstance(body, EmbeddingBinding):
        digest = embedding_digest(body.model, body.vector, row.record_revision)
        if row.embedding is not None and row.embedding.get("digest") == digest:
            return row, None  # an identical binding: a receipt, no event
        embedding = {
            "model": body.model,
            "dimensions": len(body.vector),
            "vector": list(body.vector),
            "record_revision": row.record_revision,
            "digest": digest,
        }
        return dataclasses.replace(row, embedding=embedding), "embedding_attached"
    review = {
        "decision": body.decision,
        "reason": body.reason,
        "reviewer": caller.id,
        "record_revision": row.record_revision,
        "reviewed_at_millis": now,
    }
    return dataclasses.replace(row, review=review), "reviewed"


__all__ = ["GroupPlan", "Misrouted"]
