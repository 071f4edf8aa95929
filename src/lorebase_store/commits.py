"""Writing a commit in one statement.

A commit touches many tables (the Revision, Records, Links, history, outbox, invocation, receipt,
audit). Sent as one statement of data-modifying CTEs over JSON arrays it costs one round trip,
whatever its size: an Operation's commit and a 100,000-Record import take the same path. It goes
through the asyncpg driver (TxnBase.driver), prepared once per connection.

Rows are written in the stored form (stored_form.py); the statement first gives the history rows
stored by reference through the Records it changes or deletes their values (`fil`: every CTE sees the
rows as they were before the statement).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import text

from lorebase import tracing
from lorebase_store import bulk
from lorebase_store.extractions import ExtractionsTxn
from lorebase_store.schema_versions import SchemaVersionsTxn
from lorebase_store.sources import SourcesTxn
from lorebase_store.staged_rows import StagedRowsTxn
from lorebase_store.stored_form import BY_REFERENCE, StoredRows
from lorebase_store.vault import VaultTxn

# Parameters: $1 domain_id, then the JSON arrays of CommitRows in _LISTS order, each row naming its
# branch (one statement writes the commits of several branches of a Domain: _encode).
_COMMIT = """
WITH
rev AS (
  INSERT INTO revisions (domain_id, id, branch, generation, parents, author, message, origin,
                         changes_digest, stats, created_at, schema_digest)
  SELECT $1, x.id, x.branch, x.generation, x.parents, x.author, x.message, x.origin,
         x.changes_digest, x.stats, x.created_at, x.schema_digest
  FROM jsonb_to_recordset(CAST($2 AS jsonb)) AS x(id text, branch text, generation bigint,
       parents jsonb, author text, message text, origin jsonb, changes_digest text, stats jsonb,
       created_at timestamptz, schema_digest text)
),
rec AS (
  INSERT INTO records (domain_id, branch, kind, key, "values", provenance, created_revision, updated_revision)
  SELECT $1, x.branch, x.kind, x.key, x."values", x.provenance, x.created_revision, x.updated_revision
  FROM jsonb_to_recordset(CAST($3 AS jsonb)) AS x(branch text, kind text, key text, "values" jsonb,
       provenance jsonb, created_revision text, updated_revision text)
  ON CONFLICT (domain_id, branch, kind, key) DO UPDATE
    SET "values" = EXCLUDED."values", provenance = EXCLUDED.provenance,
        updated_revision = EXCLUDED.updated_revision
),
rdel AS (
  DELETE FROM records r
  USING jsonb_to_recordset(CAST($4 AS jsonb)) AS x(branch text, kind text, key text)
  WHERE r.domain_id = $1 AND r.branch = x.branch AND r.kind = x.kind AND r.key = x.key
),
lnk AS (
  INSERT INTO links (domain_id, branch, relation, from_key, to_key, "values", provenance, revision)
  SELECT $1, x.branch, x.relation, x.from_key, x.to_key, x."values", x.provenance, x.revision
  FROM jsonb_to_recordset(CAST($5 AS jsonb)) AS x(branch text, relation text, from_key text, to_key text,
       "values" jsonb, provenance jsonb, revision text)
  ON CONFLICT (domain_id, branch, relation, from_key, to_key) DO UPDATE
    SET "values" = EXCLUDED."values", provenance = EXCLUDED.provenance, revision = EXCLUDED.revision
),
ldel AS (
  DELETE FROM links l
  USING jsonb_to_recordset(CAST($6 AS jsonb)) AS x(branch text, relation text, from_key text, to_key text)
  WHERE l.domain_id = $1 AND l.branch = x.branch AND l.relation = x.relation
    AND l.from_key = x.from_key AND l.to_key = x.to_key
),
his AS (
  INSERT INTO history (domain_id, branch, generation, revision, entity, name, key, change, attributes,
                       before, after, provenance)
  SELECT $1, x.branch, x.generation, x.revision, x.entity, x.name, x.key, x.change, x.attributes,
         x.before, x.after, x.provenance
  FROM ROWS FROM (jsonb_to_recordset(CAST($7 AS jsonb)) AS (branch text, generation bigint, revision text,
       entity text, name text, key text, change text, attributes jsonb, before jsonb, after jsonb,
       provenance jsonb)) WITH ORDINALITY AS x(branch, generation, revision, entity, name, key, change,
       attributes, before, after, provenance, n)
  ORDER BY x.n
),
evt AS (
  INSERT INTO outbox (domain_id, branch, type, revision, event, created_at, traceparent)
  SELECT $1, x.branch, x.type, x.revision, x.event, x.created_at, x.traceparent
  FROM ROWS FROM (jsonb_to_recordset(CAST($8 AS jsonb)) AS (branch text, type text, revision text,
       event jsonb, created_at timestamptz, traceparent text))
       WITH ORDINALITY AS x(branch, type, revision, event, created_at, traceparent, n)
  ORDER BY x.n
),
inv AS (
  INSERT INTO invocations (id, domain_id, operation, principal, branch, parameters, revision, created_at)
  SELECT x.id, $1, x.operation, x.principal, x.branch, x.parameters, x.revision, x.created_at
  FROM jsonb_to_recordset(CAST($9 AS jsonb)) AS x(id text, operation text, principal text, branch text,
       parameters jsonb, revision text, created_at timestamptz)
),
rcp AS (
  INSERT INTO idempotency_receipts (domain_id, principal, key, request_digest, status, response, revision, created_at)
  SELECT $1, x.principal, x.key, x.request_digest, x.status, x.response, x.revision, x.created_at
  FROM json_to_recordset(CAST($10 AS json)) AS x(principal text, key text, request_digest text,
       status integer, response json, revision text, created_at timestamptz)
),
fil AS (
  UPDATE history h SET after = r."values"
  FROM records r
  WHERE r.domain_id = $1
    AND (r.branch, r.kind, r.key) IN (
      SELECT x.branch, x.kind, x.key FROM jsonb_to_recordset(CAST($3 AS jsonb)) AS x(branch text, kind text, key text)
      UNION ALL
      SELECT x.branch, x.kind, x.key FROM jsonb_to_recordset(CAST($4 AS jsonb)) AS x(branch text, kind text, key text))
    AND h.domain_id = $1 AND h.branch = r.branch AND h.name = r.kind AND h.key = r.key
    AND {BY_REFERENCE}
),
hd AS (
  UPDATE branches SET head = x.head, generation = x.generation
  FROM jsonb_to_recordset(CAST($12 AS jsonb)) AS x(branch text, head text, generation bigint)
  WHERE branches.domain_id = $1 AND branches.name = x.branch
),
aud AS (
  INSERT INTO audit_log (at, principal, action, domain, target, details)
  SELECT x.at, x.principal, x.action, x.domain, x.target, x.details
  FROM jsonb_to_recordset(CAST($11 AS jsonb)) AS x(at timestamptz, principal text, action text,
       domain text, target text, details jsonb)
)
SELECT 1
""".replace("{BY_REFERENCE}", BY_REFERENCE)

# The xid for the outbox fence, and a notification to the relay, which PostgreSQL delivers when
# (and only if) the transaction commits: the relay publishes at once instead of at its next poll.
OUTBOX_CHANNEL = "lorebase_outbox"
_TAKE_XID = text(f"SELECT pg_current_xact_id(), pg_notify('{OUTBOX_CHANNEL}', '')")


@dataclass
class CommitRows:
    """Everything one commit writes, as plain JSON-ready rows (timestamps as ISO strings)."""

    domain_id: int
    branch: str
    revisions: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    deleted_records: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    deleted_links: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    invocations: list[dict[str, Any]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)
    # The branch's new head, when it moves: [{"head", "generation"}].
    heads: list[dict[str, Any]] = field(default_factory=list)
    # Source syncs, written after the commit statement (SourcesTxn.write_source_syncs).
    source_syncs: list[dict[str, Any]] = field(default_factory=list)
    # Extraction evidence the commit's provenance names (ExtractionsTxn.write_extractions).
    extractions: list[dict[str, Any]] = field(default_factory=list)
    # Vault entries the commit's values name by ref (VaultTxn.write_vault_entries).
    vault_entries: list[dict[str, Any]] = field(default_factory=list)
    # Schema versions a schema change commits under ({digest, document, created_at}; schema_versions.py).
    schema_versions: list[dict[str, Any]] = field(default_factory=list)
    # Rows staged in PostgreSQL before the commit (staged_rows.py), written by set statements as
    # this Revision's: [{"staging", "revision", "generation", "materialise"}] (materialise: the
    # Records' and Links' rows too; false on an overlay branch, which keeps history rows only).
    staged: list[dict[str, Any]] = field(default_factory=list)
    # A load whose keeper merges the index entries it leaves pending after the answer
    # (bulk.DEFER_INDEX_ROWS; lorebase_keeper/writes/planner_statistics.py).
    defer_index: bool = False

    def extend(self, other: CommitRows) -> None:
        for name in _LISTS:
            getattr(self, name).extend(getattr(other, name))
        self.source_syncs.extend(other.source_syncs)
        self.extractions.extend(other.extractions)
        self.vault_entries.extend(other.vault_entries)
        self.schema_versions.extend(other.schema_versions)
        self.staged.extend(other.staged)
        self.defer_index = self.defer_index or other.defer_index

    def compacted(self) -> CommitRows:
        """The rows with one final state per Record and Link.

        Commits of a group may change the same Record one after the other; history keeps every
        change, but the materialised rows take only the last state (one statement cannot upsert or
        delete one row twice). `new` stays true only for a row the database does not hold yet.
        """
        if len(self.revisions) <= 1:  # one commit changes each row once (its change set's rows)
            return self
        out = CommitRows(self.domain_id, self.branch)
        out.extend(self)
        out.records, out.deleted_records = _final_states(
            self.records, self.deleted_records, lambda r: (r["kind"], r["key"])
        )
        out.links, out.deleted_links = _final_states(
            self.links, self.deleted_links, lambda r: (r["relation"], r["from_key"], r["to_key"])
        )
        return out

    def receipt(
        self,
        *,
        principal: str,
        key: str,
        request_digest: str,
        status: int,
        response: dict[str, Any],
        revision: str | None,
        at: str,
    ) -> None:
        self.receipts.append(
            {
                "principal": principal,
                "key": key,
                "request_digest": request_digest,
                "status": status,
                "response": response,
                "revision": revision,
                "created_at": at,
            }
        )

    def audit(
        self, *, principal: str, action: str, domain: str, target: str, details: dict[str, Any], at: str
    ) -> None:
        self.audits.append(
            {
                "at": at,
                "principal": principal,
                "action": action,
                "domain": domain,
                "target": target,
                "details": details,
            }
        )


def _final_states(
    upserts: list[dict[str, Any]], deletes: list[dict[str, Any]], key: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not deletes and len({key(r) for r in upserts}) == len(upserts):
        return list(upserts), list(deletes)
    # Order the actions as planned: upserts carry their place in the records list, deletes come
    # from the same commits; a commit never both upserts and deletes one row, so the order of
    # commits is what counts, and `seq` (set by plan order) keeps it.
    actions = sorted(
        [(r.get("seq", 0), "upsert", r) for r in upserts] + [(r.get("seq", 0), "delete", r) for r in deletes],
        key=lambda item: item[0],
    )
    final: dict[Any, tuple[str, dict[str, Any], bool]] = {}
    for _, action, row in actions:
        ident = key(row)
        stored = final[ident][2] if ident in final else (action == "delete" or not row.get("new"))
        final[ident] = (action, row, stored)
    kept_upserts = [
        {**row, "new": not stored} for action, row, stored in final.values() if action == "upsert"
    ]
    kept_deletes = [row for action, row, stored in final.values() if action == "delete" and stored]
    return kept_upserts, kept_deletes


def _encode(parts: list[tuple[CommitRows, StoredRows]]) -> list[str]:
    """The commit statement's JSON arrays, in _LISTS order: the rows of every branch's commits in
    the stored form, each naming its branch (the revisions and receipts need not)."""
    lists: dict[str, list[dict[str, Any]]] = {name: [] for name in _LISTS}
    for rows, form in parts:
        branch = rows.branch
        lists["revisions"] += rows.revisions
        lists["records"] += [{**form.record(r), "branch": branch} for r in rows.records]
        lists["links"] += [{**form.link(r), "branch": branch} for r in rows.links]
        lists["history"] += [{**form.history(h), "branch": branch} for h in rows.history]
        for name in ("deleted_records", "deleted_links", "events", "invocations", "heads"):
            lists[name] += [{**r, "branch": branch} for r in getattr(rows, name)]
        lists["receipts"] += rows.receipts
        lists["audits"] += rows.audits
    return [orjson.dumps(lists[name]).decode() for name in _LISTS]


_LISTS = (
    "revisions",
    "records",
    "deleted_records",
    "links",
    "deleted_links",
    "history",
    "events",
    "invocations",
    "receipts",
    "audits",
    "heads",
)


class CommitsTxn(ExtractionsTxn, SchemaVersionsTxn, SourcesTxn, StagedRowsTxn, VaultTxn):
    async def write_commit_rows(self, *branches: CommitRows) -> None:
        """Write a commit, a group of them, or the groups of several branches of one Domain: one
        statement, plus COPY for the rows of a large one, after the source syncs, extractions, vault
        entries and schema versions of each."""
        parts: list[tuple[CommitRows, StoredRows]] = []
        large = False
        for rows in branches:
            prepared = await self._prepare_commit_rows(rows)
            if prepared is not None:
                parts.append(prepared[:2])
                large = large or prepared[2]
        if not parts:
            return
        if any(rows.events for rows, _ in parts) and not self.outbox_xid_held:
            # The outbox fence (lorebase_store.fence) needs this transaction to hold its xid before
            # it takes an outbox sequence: a reader that saw the sequence then sees the transaction
            # in progress. Inside the commit statement the order of the two is not defined. The
            # same statement queues the relay's wake-up (sent on commit). A group commit's branch
            # lock (DomainsTxn.lock_branches) did both already; merges written here come this way.
            await self.conn.execute(_TAKE_XID)
            self.outbox_xid_held = True
        # A large commit's rows (a schema change migrating a million Records) take seconds of CPU
        # to encode: in a thread, so the process serves its other requests meanwhile.
        encoded = await asyncio.to_thread(_encode, parts) if large else _encode(parts)
        driver = await self.driver()
        await driver.execute(_COMMIT, parts[0][0].domain_id, *encoded)

    async def _prepare_commit_rows(self, rows: CommitRows) -> tuple[CommitRows, StoredRows, bool] | None:
        """Write what goes before the commit statement: the rows left for it, their stored form and
        whether they were many (None: nothing left)."""
        if rows.source_syncs:
            await self.write_source_syncs(rows.domain_id, rows.branch, rows.source_syncs)
        if rows.extractions:
            await self.write_extractions(rows.domain_id, rows.extractions)
        if rows.vault_entries:
            await self.write_vault_entries(rows.domain_id, rows.vault_entries)
        if rows.schema_versions:
            await self.write_schema_versions(rows.domain_id, rows.schema_versions)
        if not any(getattr(rows, name) for name in _LISTS):
            return None
        rows = rows.compacted()
        if rows.events and tracing.enabled():
            # The trace of a commit written in the request's own task (a merge); a group commit's
            # events carry their writer's already (lorebase_keeper.writes.commit).
            current = tracing.traceparent()
            for event in rows.events:
                event.setdefault("traceparent", current or None)
        for staged in rows.staged:
            if rows.defer_index and staged.get("count", 0) >= bulk.DEFER_INDEX_ROWS:
                # Rewriting this many Records' values merges their index entries 4 MB at a time
                # by default: about 40 % of the UPDATE, under the branch's lock (docs/performance.md).
                await (await self.driver()).execute(bulk.PENDING_LIMIT)
            await self.apply_staged_rows(
                rows.domain_id,
                rows.branch,
                staged["staging"],
                staged["revision"],
                staged["generation"],
                history=True,
                fill=False,  # done as they were staged (StagedRowsTxn.stage_rows)
                materialise=staged["materialise"],
            )
        form = StoredRows(rows.records)
        large = len(rows.records) + len(rows.links) + len(rows.history) >= bulk.COPY_THRESHOLD
        if large:
            rows = await self._copy_bulk(rows, form)
        return rows, form, large

    async def _copy_bulk(self, rows: CommitRows, form: StoredRows) -> CommitRows:
        """COPY the new Records, new Links and the history rows (bulk.py), and many changed Records
        through staged_rows (staged_rows.py); what is left goes by statement."""
        raw = await self.conn.get_raw_connection()
        driver: Any = raw.driver_connection
        d, b = rows.domain_id, rows.branch
        json = bulk.Documents()
        new_records = [r for r in rows.records if r.get("new")]
        new_links = [r for r in rows.links if r.get("new")]
        changed = [r for r in rows.records if not r.get("new")]
        if len(changed) >= bulk.COPY_THRESHOLD:
            # An import updating many Records: as one JSON array they may pass jsonb's 256 MB
            # limit, and COPY parses each document once.
            staging = f"commit-{uuid.uuid4().hex}"
            await self.copy_staged_rows(bulk.staged_record_rows(staging, changed, json, form))
            await self.apply_staged_rows(d, b, staging, "", 0, history=False)
            changed = []
        if new_records:
            if rows.defer_index and len(new_records) >= bulk.DEFER_INDEX_ROWS:
                await driver.execute(bulk.PENDING_LIMIT)
            await bulk.copy_rows(
                driver, "records", bulk.RECORD_COLUMNS, bulk.record_rows(d, b, new_records, json, form)
            )
        if new_links:
            await bulk.copy_rows(
                driver, "links", bulk.LINK_COLUMNS, bulk.link_rows(d, b, new_links, json, form)
            )
        if rows.history:
            await bulk.copy_rows(
                driver, "history", bulk.HISTORY_COLUMNS, bulk.history_rows(d, b, rows.history, json, form)
            )
        rest = CommitRows(d, b)
        rest.extend(rows)
        rest.records = changed
        rest.links = [r for r in rows.links if not r.get("new")]
        rest.history = []
        return rest


__all__ = ["CommitRows", "CommitsTxn"]
