"""Memory commands written as a group: the reads a group of commands on one journal needs, in one
statement, and everything it writes, in one statement of data-modifying CTEs over JSON arrays
(the shape of commits.py).

A group transaction is three round trips: BEGIN with the group's settings; `begin_memory_group`
(the journal's row lock and, in the same statement, the keys, receipts, records and grants); and
`write_memory_rows`, then COMMIT. Every writer of a memory record holds the lock of the record's
journal, so the records cannot change between the lock and the commit; and they did not change
between the statement's snapshot and the lock unless the journal's `last_sequence` moved in
between, in which case (and when a journal is created, by `lock_memory_journal` in
memory_journal.py on the first write of a namespace) `memory_group_state` reads them again. A receipt's primary key
(tenant, principal, idempotency key) refuses a second receipt of one key written concurrently by
the group of another journal (whose commit it waits for): that group's transaction fails with
`ReceiptTaken`, and runs again; then it reads the receipt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg
import orjson

from lorebase_store.memory import MemoryReceipt, MemoryRecordRow, record_row
from lorebase_store.memory_journal import JournalRow
from lorebase_store.principals import LIVE_KEY_SQL
from lorebase_store.txn import TxnBase

# A group's transaction settings, sent with its BEGIN: synchronous_commit on (the commit waits for
# its WAL flush, whatever the server's default) and plan_cache_mode = force_custom_plan (set before
# the group's first statement is planned). Custom plans: a generic plan cached while the memory
# tables were small scans them whole (it sizes a JSON array of keys at 100 rows against a table of a
# few pages) and stays cached as they grow; a custom plan sees their current size.
_GROUP_SETTINGS = "SET LOCAL synchronous_commit = on; SET LOCAL plan_cache_mode = force_custom_plan"

# The principals of the callers' API keys (those live: not revoked, not expired), the receipts of the group's
# idempotency keys, its records (and the sources of its derivations), and the grants its callers
# hold on the journal's scope and on the scopes of those records.
# Parameters: $1 keys, $2 digests, $3 record_ids, $4 callers, $5 project_id, $6 mission_id, $7 agent_id.
_STATE_CTES = """
k AS (SELECT * FROM jsonb_to_recordset(CAST($1 AS jsonb)) AS x(tenant text, principal text, key text)),
r AS (SELECT * FROM memory_records WHERE id = ANY(CAST($3 AS text[]))),
c AS (SELECT * FROM jsonb_to_recordset(CAST($4 AS jsonb)) AS x(principal text, tenant text)),
s AS (
  SELECT CAST($5 AS text) AS project_id, CAST($6 AS text) AS mission_id,
         CAST($7 AS text) AS agent_id
  WHERE CAST($5 AS text) IS NOT NULL
  UNION SELECT project_id, mission_id, agent_id FROM r
)
"""
_STATE_PARTS = """
SELECT 'key' AS part, jsonb_build_object('digest', a.digest, 'principal', a.principal_id) AS row
  FROM api_keys a WHERE a.digest = ANY(CAST($2 AS text[])) AND {live_key}
UNION ALL
SELECT 'receipt', to_jsonb(m)
  FROM memory_receipts m JOIN k ON m.tenant = k.tenant AND m.principal = k.principal AND m.key = k.key
UNION ALL
SELECT 'record', to_jsonb(r) FROM r
UNION ALL
SELECT 'grant', jsonb_build_object('principal_id', g.principal_id, 'project_id', g.project_id,
                                   'mission_id', g.mission_id, 'agent_id', g.agent_id,
                                   'capabilities', g.capabilities)
  FROM memory_grants g
  JOIN c ON g.principal_id = c.principal AND g.tenant = c.tenant
  JOIN s ON g.project_id = s.project_id AND g.agent_id = s.agent_id
        AND g.mission_id IS NOT DISTINCT FROM s.mission_id
""".replace("{live_key}", LIVE_KEY_SQL.format(a="a"))
_GROUP_STATE = f"WITH {_STATE_CTES} {_STATE_PARTS}"

# A group's first statement: the journal row's lock (no row: the namespace has no journal yet) and,
# in the same statement, the group's state. The state is read in the statement's snapshot, taken
# before the lock was granted; the locked row is the journal's latest version. When the lock waited
# for another group, that group may have committed records of this journal after the snapshot: the
# journal's `last_sequence` in the snapshot (`seen`) then differs from the locked row's, and the
# caller reads the state again (memory_group_state) now that the lock is held.
# Parameters: those of _GROUP_STATE, then $8 the namespace key.
_LOCK_GROUP = f"""
WITH
j AS (SELECT id, namespace_key, last_sequence, last_chain FROM memory_journals
       WHERE namespace_key = $8 FOR UPDATE),
{_STATE_CTES}
SELECT 'journal' AS part,
       jsonb_build_object('id', j.id, 'namespace_key', j.namespace_key, 'last_sequence', j.last_sequence,
                          'last_chain', j.last_chain,
                          'seen', (SELECT last_sequence FROM memory_journals WHERE namespace_key = $8)) AS row
  FROM j
UNION ALL
{_STATE_PARTS}
"""

_RECORD_COLUMNS = """id text, namespace_key text, tenant text, project_id text, mission_id text, agent_id text,
       visibility text, subject text, record_revision bigint, status text, content jsonb,
       content_digest text, derived_from jsonb, valid_until_millis bigint, embedding jsonb, review jsonb,
       created_by text, created_at_millis bigint, updated_by text, updated_at_millis bigint"""

# Parameters: the JSON arrays of MemoryRows in _LISTS order.
_WRITE = f"""
WITH
new_records AS (
  INSERT INTO memory_records
  SELECT x.* FROM jsonb_to_recordset(CAST($1 AS jsonb)) AS x({_RECORD_COLUMNS})
),
changed_records AS (
  UPDATE memory_records m
     SET record_revision = x.record_revision, status = x.status, content = x.content,
         content_digest = x.content_digest, valid_until_millis = x.valid_until_millis,
         embedding = x.embedding, review = x.review, updated_by = x.updated_by,
         updated_at_millis = x.updated_at_millis
    FROM jsonb_to_recordset(CAST($2 AS jsonb)) AS x({_RECORD_COLUMNS})
   WHERE m.id = x.id
),
entries AS (
  INSERT INTO memory_journal_entries (journal_id, sequence, schema_version, kind, record_id, record_revision,
                                      author, committed_at_millis, change_digest, chain_digest)
  SELECT x.journal_id, x.sequence, x.schema_version, x.kind, x.record_id, x.record_revision, x.author,
         x.committed_at_millis, x.change_digest, x.chain_digest
    FROM jsonb_to_recordset(CAST($3 AS jsonb)) AS x(journal_id text, sequence bigint,
         schema_version integer, kind text, record_id text, record_revision bigint, author text,
         committed_at_millis bigint, change_digest text, chain_digest text)
),
head AS (
  UPDATE memory_journals SET last_sequence = x.last_sequence, last_chain = x.last_chain
    FROM jsonb_to_recordset(CAST($4 AS jsonb)) AS x(id text, last_sequence bigint, last_chain text)
   WHERE memory_journals.id = x.id
),
integrity AS (
  INSERT INTO memory_integrity (record_id, journal_id, record_revision, state_digest, last_sequence)
  SELECT x.record_id, x.journal_id, x.record_revision, x.state_digest, x.last_sequence
    FROM jsonb_to_recordset(CAST($5 AS jsonb)) AS x(record_id text, journal_id text,
         record_revision bigint, state_digest text, last_sequence bigint)
  ON CONFLICT (record_id) DO UPDATE
    SET journal_id = EXCLUDED.journal_id, record_revision = EXCLUDED.record_revision,
        state_digest = EXCLUDED.state_digest, last_sequence = EXCLUDED.last_sequence
),
receipts AS (
  INSERT INTO memory_receipts (tenant, principal, key, command, request_digest, status, response, created_at)
  SELECT x.tenant, x.principal, x.key, x.command, x.request_digest, x.status, x.response, x.created_at
    FROM jsonb_to_recordset(CAST($6 AS jsonb)) AS x(tenant text, principal text, key text,
         command text, request_digest text, status integer, response jsonb, created_at timestamptz)
),
reviews AS (
  INSERT INTO memory_reviews (record_id, record_revision, decision, reason, reviewer, created_at_millis)
  SELECT x.record_id, x.record_revision, x.decision, x.reason, x.reviewer, x.created_at_millis
    FROM ROWS FROM (jsonb_to_recordset(CAST($7 AS jsonb)) AS (record_id text, record_revision bigint,
         decision text, reason text, reviewer text, created_at_millis bigint))
         WITH ORDINALITY AS x(record_id, record_revision, decision, reason, reviewer, created_at_millis, n)
   ORDER BY x.n
)
SELECT 1
"""


class ReceiptTaken(Exception):
    """A concurrent transaction committed a receipt of one of the group's idempotency keys first."""


@dataclass(frozen=True)
class MemoryGroupState:
    """What a group of commands reads once its locks are held."""

    keys: dict[str, str]  # API key digest → principal, for the keys not revoked
    receipts: dict[tuple[str, str, str], MemoryReceipt]  # (tenant, principal, key) →
    records: dict[str, MemoryRecordRow]
    # (principal, project, mission, agent) → capabilities, in the callers' own tenants
    grants: dict[tuple[str, str, str | None, str], set[str]]


@dataclass
class MemoryRows:
    """Everything a group writes, as JSON-ready rows. A record appears once, in its final state."""

    new_records: list[dict[str, Any]] = field(default_factory=list)
    changed_records: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    heads: list[dict[str, Any]] = field(default_factory=list)  # {"id", "last_sequence", "last_chain"}
    integrity: list[dict[str, Any]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)

    def empty(self) -> bool:
        return not any(getattr(self, name) for name in _LISTS)


_LISTS = ("new_records", "changed_records", "entries", "heads", "integrity", "receipts", "reviews")


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _state_parameters(
    keys: list[tuple[str, str, str]],
    digests: list[str],
    record_ids: list[str],
    callers: list[tuple[str, str]],
    scope: tuple[str, str | None, str] | None,
) -> tuple[Any, ...]:
    """$1-$7 of _GROUP_STATE."""
    project, mission, agent = scope if scope is not None else (None, None, None)
    return (
        _dumps([{"tenant": t, "principal": p, "key": k} for t, p, k in keys]),
        digests,
        sorted(set(record_ids)),
        _dumps([{"principal": p, "tenant": t} for p, t in callers]),
        project,
        mission,
        agent,
    )


class _GroupStateReader:
    """Collects the rows of _STATE_PARTS into a MemoryGroupState."""

    def __init__(self) -> None:
        self.principals: dict[str, str] = {}
        self.receipts: dict[tuple[str, str, str], MemoryReceipt] = {}
        self.records: dict[str, MemoryRecordRow] = {}
        self.grants: dict[tuple[str, str, str | None, str], set[str]] = {}

    def add(self, part: str, row: dict[str, Any]) -> None:
        if part == "key":
            self.principals[row["digest"]] = row["principal"]
        elif part == "receipt":
            self.receipts[(row["tenant"], row["principal"], row["key"])] = MemoryReceipt(
                row["command"], row["request_digest"], row["status"], row["response"]
            )
        elif part == "record":
            self.records[row["id"]] = record_row(row)
        else:
            scope_key = (row["principal_id"], row["project_id"], row["mission_id"], row["agent_id"])
            self.grants.setdefault(scope_key, set()).update(row["capabilities"])

    def state(self) -> MemoryGroupState:
        return MemoryGroupState(self.principals, self.receipts, self.records, self.grants)


class MemoryWritesTxn(TxnBase):
    async def begin_memory_group(
        self,
        namespace_key: str | None,
        keys: list[tuple[str, str, str]],
        digests: list[str],
        record_ids: list[str],
        callers: list[tuple[str, str]],
        scope: tuple[str, str | None, str] | None,
    ) -> tuple[JournalRow | None, MemoryGroupState | None]:
        """Begin the group's transaction (durable commit, custom plans), lock the journal of
        `namespace_key` until it ends, and read the group's state (memory_group_state's) in the
        same statement. The journal is None when the namespace has none yet; the state is None
        when it must be read again once the lock is held: the lock waited for a group that moved
        the journal, or there is no journal (one may be created concurrently)."""
        driver = await self.driver(settings=_GROUP_SETTINGS)
        rows = await driver.fetch(
            _LOCK_GROUP, *_state_parameters(keys, digests, record_ids, callers, scope), namespace_key or ""
        )
        journal = None
        state = _GroupStateReader()
        for part, row in (tuple(found) for found in rows):
            if isinstance(row, str | bytes):  # a driver that leaves jsonb undecoded
                row = orjson.loads(row)
            if part == "journal":
                journal = JournalRow(row["id"], row["namespace_key"], row["last_sequence"], row["last_chain"])
                if row["seen"] != journal.last_sequence:  # another group committed while we waited
                    return journal, None
            else:
                state.add(part, row)
        return journal, None if journal is None else state.state()

    async def memory_group_state(
        self,
        keys: list[tuple[str, str, str]],
        digests: list[str],
        record_ids: list[str],
        callers: list[tuple[str, str]],
        scope: tuple[str, str | None, str] | None,
    ) -> MemoryGroupState:
        """The principals of the API key `digests` (not revoked), the receipts of `keys`, the records
        `record_ids`, and the grants of `callers` (principal, tenant) on `scope` (project, mission,
        agent) and on the scopes of those records."""
        driver = await self.driver()
        rows = await driver.fetch(_GROUP_STATE, *_state_parameters(keys, digests, record_ids, callers, scope))
        state = _GroupStateReader()
        for part, row in (tuple(found) for found in rows):
            state.add(part, orjson.loads(row) if isinstance(row, str | bytes) else row)
        return state.state()

    async def write_memory_rows(self, rows: MemoryRows) -> None:
        """Write a group's records, journal entries, journal head, integrity entries, receipts and
        reviews in one statement."""
        if rows.empty():
            return
        driver = await self.driver()
        try:
            await driver.execute(_WRITE, *(_dumps(getattr(rows, name)) for name in _LISTS))
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name == "memory_receipts_pkey":
                raise ReceiptTaken from exc
            raise


__all__ = ["MemoryGroupState", "MemoryRows", "MemoryWritesTxn", "ReceiptTaken"]
