"""Memory commands written as a group: the reads a group of commands on one journal needs, in one
statement, and everything it writes, in one statement of data-modifying CTEs over JSON arrays
(the shape of commits.py).

A group transaction runs, in this order: `begin_memory_group` (synchronous_commit on, and the
journal's row lock; `lock_memory_journal` in memory_journal.py creates a journal on the first
write of a namespace), `memory_group_state` (keys, receipts, records and grants) and
`write_memory_rows`. Every writer of a memory record holds the lock of the record's journal, so
the records read after it cannot change before the group commits. A receipt's primary key
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

# The first statement of a group: SET LOCAL synchronous_commit = on (the commit waits for its WAL
# flush, whatever the server's default) and plan_cache_mode = force_custom_plan, and the journal
# row's lock (no row: the namespace has no journal yet). Custom plans: a generic plan cached while
# the memory tables were small scans them whole (it sizes a JSON array of keys at 100 rows against
# a table of a few pages) and stays cached as they grow; a custom plan sees their current size.
_BEGIN_GROUP = """
SELECT set_config('synchronous_commit', 'on', true) AS durable,
       set_config('plan_cache_mode', 'force_custom_plan', true) AS planned,
       j.id, j.namespace_key, j.last_sequence, j.last_chain
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (SELECT id, namespace_key, last_sequence, last_chain FROM memory_journals
                      WHERE namespace_key = $1 FOR UPDATE) AS j ON true
"""

# The principals of the callers' API keys (those live: not revoked, not expired), the receipts of the group's
# idempotency keys, its records (and the sources of its derivations), and the grants its callers
# hold on the journal's scope and on the scopes of those records.
# Parameters: $1 keys, $2 digests, $3 record_ids, $4 callers, $5 project_id, $6 mission_id, $7 agent_id.
_GROUP_STATE = """
WITH
k AS (SELECT * FROM jsonb_to_recordset(CAST($1 AS jsonb)) AS x(tenant text, principal text, key text)),
r AS (SELECT * FROM memory_records WHERE id = ANY(CAST($3 AS text[]))),
c AS (SELECT * FROM jsonb_to_recordset(CAST($4 AS jsonb)) AS x(principal text, tenant text)),
s AS (
  SELECT CAST($5 AS text) AS project_id, CAST($6 AS text) AS mission_id,
         CAST($7 AS text) AS agent_id
  WHERE CAST($5 AS text) IS NOT NULL
  UNION SELECT project_id, mission_id, agent_id FROM r
)
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


class MemoryWritesTxn(TxnBase):
    async def begin_memory_group(self, namespace_key: str | None) -> JournalRow | None:
        """Make this transaction's commit durable and its plans fit the tables' current size, and
        lock the journal of `namespace_key` until the transaction ends (None: no journal yet)."""
        driver = await self.driver()
        row = await driver.fetchrow(_BEGIN_GROUP, namespace_key or "")
        if row["id"] is None:
            return None
        return JournalRow(row["id"], row["namespace_key"], row["last_sequence"], row["last_chain"])

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
        project, mission, agent = scope if scope is not None else (None, None, None)
        driver = await self.driver()
        rows = await driver.fetch(
            _GROUP_STATE,
            _dumps([{"tenant": t, "principal": p, "key": k} for t, p, k in keys]),
            digests,
            sorted(set(record_ids)),
            _dumps([{"principal": p, "tenant": t} for p, t in callers]),
            project,
            mission,
            agent,
        )
        principals: dict[str, str] = {}
        receipts: dict[tuple[str, str, str], MemoryReceipt] = {}
        records: dict[str, MemoryRecordRow] = {}
        grants: dict[tuple[str, str, str | None, str], set[str]] = {}
        for part, row in (tuple(found) for found in rows):
            if isinstance(row, str | bytes):  # a driver that leaves jsonb undecoded
                row = orjson.loads(row)
            if part == "key":
                principals[row["digest"]] = row["principal"]
            elif part == "receipt":
                receipts[(row["tenant"], row["principal"], row["key"])] = MemoryReceipt(
                    row["command"], row["request_digest"], row["status"], row["response"]
                )
            elif part == "record":
                records[row["id"]] = record_row(row)
            else:
                scope_key = (row["principal_id"], row["project_id"], row["mission_id"], row["agent_id"])
                grants.setdefault(scope_key, set()).update(row["capabilities"])
        return MemoryGroupState(principals, receipts, records, grants)

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
