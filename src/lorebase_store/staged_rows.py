"""Rows of a large commit staged in PostgreSQL before the commit (migration 0021, issue 30).

A change set migrating a million Records cannot hold the branch's commit lock while a million rows
and a million history rows are planned in keeper and sent. So its staging (lorebase_keeper
schema_changes/staged/staging.py), outside the lock, COPYs the rows it will commit into `staged_rows` under
a staging id, with a placeholder (`PLACEHOLDER`) where the Revision id goes in provenance, and
no Revision id or generation yet; in the same transactions the history rows stored by reference
through those Records take their values (stored_form.py: what the commit statement's `fil` does
before a Record changes, done early; a read answers the same either way). The commit, under the
lock, replaces the rows the catch-up migrated again (filling theirs), then writes everything with
set statements (`apply_staged_rows`): Records are deleted, updated (`UPDATE records ... FROM staged_rows`) or upserted, Links likewise, and the
history rows are inserted in the order of the changes (`INSERT INTO history ... SELECT`), the
Revision id and generation filled in there, a modified Record's stored by reference (its `after`
NULL, read through the Record's row just updated: stored_form.py, migration 0024), so the lock
writes each migrated Record's values once; last the staged rows go. What the lock holds is then
PostgreSQL's work.

A large commit's changed Records (an import that updates 2,000 existing Records or more) take the
same path inside their transaction: COPY here, then the same upsert.

Each row says how its Record or Link is written: `upsert` (INSERT ... ON CONFLICT DO UPDATE) or an
UPDATE of the row that is there; `created_revision` and `updated_revision` NULL mean the commit's
Revision. `element` is the row's entry in the Revision's changes digest (canonical JSON) and
`writes` what it counts in a change set's answer (`Migration.writes`).

The table is UNLOGGED (no WAL; a crash empties it). Staged rows go on success (in the commit's
transaction), on a refusal or an error (`forget_staged_rows`), and when a keeper starts
(`clear_staged_rows`): the rows of every staging whose keeper is gone, none of a live one's.

A change set's keeper holds its staging's liveness mark from before its first row is staged until
its rows are gone (committed or forgotten): the lease `Database.lease(staging)`, a session-level
advisory lock (one bigint, `hashtextextended(staging, 0)`) on a connection of its own, which goes
with keeper's process or that connection. The clear takes the mark of each staging it finds
(`pg_try_advisory_xact_lock`, until its transaction ends) and deletes the rows of those it got: a
keeper that stopped mid-staging leaves nothing, and a rolling restart of one keeper leaves the
other's stagings alone (their commits go on). A staging whose mark went while its keeper lives (the
connection lost) may be cleared too: its commit then answers 409 schema-migration-moved, send the
change set again. Rows staged inside their commit's transaction (a large import's `commit-…`, a
merge's catch-up) take no mark: a clear never sees them.

The commit that writes a staging's rows holds them until its transaction ends (`hold_staged_rows`:
transaction-scoped advisory locks, the staging's own and the clear's shared), and counts them
after taking the locks; `forget_staged_rows` and `clear_staged_rows` take those locks first. So a
deletion either happened before the count (the commit answers 409 schema-migration-moved, nothing
changed) or waits until the commit is over: never between the count and the set statements, which
would commit part of a migration (a synchronous call cancelled by its deadline while its commit
runs forgets its rows; a keeper that starts clears those of a staging whose mark went).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from sqlalchemy import text

from lorebase_store.stored_form import BY_REFERENCE
from lorebase_store.txn import TxnBase

logger = logging.getLogger("lorebase.store.staged_rows")

# Stands for the Revision id in staged provenance (a SHA-256 hex is never all zeros).
PLACEHOLDER = "0" * 64
# The advisory locks' keys (the two-integer form, a space of its own): (_STAGING, hashtext(staging))
# for one staging, (_CLEAR, 0) for all of them. A staging's liveness mark is the one-bigint form.
_STAGING, _CLEAR = 0x5354_0001, 0x5354_0002

COLUMNS = (
    "staging",
    "part",
    "name",
    "key",
    "entity",
    "change",
    "attributes",
    "before",
    "after",
    "provenance",
    "created_revision",
    "updated_revision",
    "upsert",
    "element",
    "writes",
)

Row = tuple[Any, ...]

_PROVENANCE = f"""replace(s.provenance::text, '"{PLACEHOLDER}"', '"' || $4 || '"')::jsonb"""
_STAGED = "s.staging = $3 AND s.entity = '{entity}'"

# $1 domain_id, $2 branch, $3 staging, $4 revision.
_FILL = f"""
UPDATE history h SET after = r."values"
FROM staged_rows s JOIN records r ON r.kind = s.name AND r.key = s.key
WHERE {_STAGED.format(entity="record")} AND r.domain_id = $1 AND r.branch = $2
  AND h.domain_id = $1 AND h.branch = $2 AND h.name = r.kind AND h.key = r.key AND {BY_REFERENCE}
"""
# The same for the Records named ($3 Kinds, $4 keys): a migration's, as they are staged.
_FILL_RECORDS = f"""
UPDATE history h SET after = r."values"
FROM unnest(CAST($3 AS text[]), CAST($4 AS text[])) AS x(kind, key)
JOIN records r ON r.kind = x.kind AND r.key = x.key
WHERE r.domain_id = $1 AND r.branch = $2
  AND h.domain_id = $1 AND h.branch = $2 AND h.name = r.kind AND h.key = r.key AND {BY_REFERENCE}
"""
_DELETE_RECORDS = f"""
DELETE FROM records r USING staged_rows s
WHERE {_STAGED.format(entity="record")} AND s.after IS NULL
  AND r.domain_id = $1 AND r.branch = $2 AND r.kind = s.name AND r.key = s.key
"""
_UPDATE_RECORDS = f"""
UPDATE records r
SET "values" = s.after, provenance = {_PROVENANCE}, updated_revision = COALESCE(s.updated_revision, $4)
FROM staged_rows s
WHERE {_STAGED.format(entity="record")} AND s.after IS NOT NULL AND NOT s.upsert
  AND r.domain_id = $1 AND r.branch = $2 AND r.kind = s.name AND r.key = s.key
"""
_UPSERT_RECORDS = f"""
INSERT INTO records (domain_id, branch, kind, key, "values", provenance, created_revision, updated_revision)
SELECT $1, $2, s.name, s.key, s.after, {_PROVENANCE}, COALESCE(s.created_revision, $4),
       COALESCE(s.updated_revision, $4)
FROM staged_rows s
WHERE {_STAGED.format(entity="record")} AND s.after IS NOT NULL AND s.upsert
ON CONFLICT (domain_id, branch, kind, key) DO UPDATE
  SET "values" = EXCLUDED."values", provenance = EXCLUDED.provenance,
      updated_revision = EXCLUDED.updated_revision
"""
_FROM_KEY = "split_part(s.key, '->', 1)"
_TO_KEY = "substr(s.key, strpos(s.key, '->') + 2)"
_DELETE_LINKS = f"""
DELETE FROM links l USING staged_rows s
WHERE {_STAGED.format(entity="link")} AND s.after IS NULL
  AND l.domain_id = $1 AND l.branch = $2 AND l.relation = s.name
  AND l.from_key = {_FROM_KEY} AND l.to_key = {_TO_KEY}
"""
_UPSERT_LINKS = f"""
INSERT INTO links (domain_id, branch, relation, from_key, to_key, "values", provenance, revision)
SELECT $1, $2, s.name, {_FROM_KEY}, {_TO_KEY}, s.after, {_PROVENANCE}, COALESCE(s.updated_revision, $4)
FROM staged_rows s
WHERE {_STAGED.format(entity="link")} AND s.after IS NOT NULL
ON CONFLICT (domain_id, branch, relation, from_key, to_key) DO UPDATE
  SET "values" = EXCLUDED."values", provenance = EXCLUDED.provenance, revision = EXCLUDED.revision
"""
# $5 generation. The rows in the order of the changes: their sequence numbers follow it. A modified
# Record's row stores `after` by reference (stored_form.py): the Record's row as `_UPDATE_RECORDS`
# just wrote it, updated by this Revision; on a copy branch only (an overlay branch has no Records'
# rows: docs/branches.md).
_HISTORY = f"""
INSERT INTO history (domain_id, branch, generation, revision, entity, name, key, change, attributes,
                     before, after, provenance)
SELECT $1, $2, $5, $4, s.entity, s.name, s.key, s.change, s.attributes, s.before,
       CASE WHEN s.entity = 'record' AND s.change = 'modified' AND NOT s.upsert
                 AND s.updated_revision IS NULL
                 AND (SELECT b.mode FROM branches b WHERE b.domain_id = $1 AND b.name = $2) = 'copy'
            THEN NULL ELSE s.after END,
       {_PROVENANCE}
FROM staged_rows s
WHERE s.staging = $3
ORDER BY s.part, s.name COLLATE "C", s.key COLLATE "C"
"""
_FORGET = "DELETE FROM staged_rows WHERE staging = $1"
# The rows of the stagings whose liveness mark is free (the key Database.lease takes for the staging
# id), each mark tried once per staging and held until the clear's transaction ends (a CTE with a
# volatile function is computed once, and its condition stays above the DISTINCT).
_CLEAR_GONE = """
WITH gone AS (
  SELECT staging FROM (SELECT DISTINCT staging FROM staged_rows) s
  WHERE pg_try_advisory_xact_lock(hashtextextended(s.staging, 0))
)
DELETE FROM staged_rows r USING gone WHERE r.staging = gone.staging
"""
_DROP = """
DELETE FROM staged_rows s
USING unnest(CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[])) AS x(entity, name, key)
WHERE s.staging = $1 AND s.part = CASE WHEN x.entity = 'record' THEN 0 ELSE 1 END
  AND s.name = x.name AND s.key = x.key
RETURNING s.entity, s.name, s.key, s.writes
"""
# Per ($2, $3) Kind and Attribute: how many Records each value gains (lost: negative) by the staged
# changes naming it, its text as `->>` gives it (what a count of the values groups by); at most $4
# values each (past it: one row, value NULL). Of the keys $5 ($6) only, when given.
_VALUE_DELTAS = """
SELECT kind, attribute, CASE WHEN n <= cap THEN value END, CASE WHEN n <= cap THEN d ELSE 0 END
FROM (
  SELECT w.kind, w.attribute, w.cap, v.value, sum(v.d) AS d,
         count(*) OVER (PARTITION BY w.kind, w.attribute) AS n,
         row_number() OVER (PARTITION BY w.kind, w.attribute ORDER BY v.value) AS i
  FROM unnest(CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS int[])) AS w(kind, attribute, cap)
  JOIN staged_rows s ON s.staging = $1 AND s.part = 0 AND s.name = w.kind AND s.attributes ? w.attribute
  CROSS JOIN LATERAL (VALUES (s.before ->> w.attribute, -1), (s.after ->> w.attribute, 1)) AS v(value, d)
  WHERE v.value IS NOT NULL {keys}
  GROUP BY w.kind, w.attribute, w.cap, v.value
  HAVING sum(v.d) <> 0
) x
WHERE n <= cap OR i = 1
"""
_OF_KEYS = "AND (s.name, s.key) IN (SELECT * FROM unnest(CAST($5 AS text[]), CAST($6 AS text[])))"
_ELEMENTS = """
SELECT entity, name, key, element FROM staged_rows WHERE staging = $1
ORDER BY part, name COLLATE "C", key COLLATE "C"
"""


class StagedRowsTxn(TxnBase):
    async def copy_staged_rows(self, rows: Iterable[Row]) -> None:
        """COPY rows (COLUMNS, in that order) into staged_rows."""
        driver = await self.driver()
        await driver.copy_records_to_table("staged_rows", columns=COLUMNS, records=rows)

    async def stage_rows(self, domain_id: int, branch: str, rows: list[Row]) -> None:
        """COPY a migration's rows into staged_rows, and give the history rows stored by reference
        through their Records their values now (stored_form.py): what a commit's `fil` does, done
        early. It changes no answer (the row reads the same either way), and a Record that changes
        meanwhile has its row filled by that write; so the commit need not (`fill=False`)."""
        await self.copy_staged_rows(rows)
        records = [(row[2], row[3]) for row in rows if row[4] == "record"]
        if records:
            driver = await self.driver()
            await driver.execute(
                _FILL_RECORDS, domain_id, branch, [k for k, _ in records], [key for _, key in records]
            )

    async def apply_staged_rows(
        self,
        domain_id: int,
        branch: str,
        staging: str,
        revision: str,
        generation: int,
        *,
        history: bool,
        fill: bool = True,
        materialise: bool = True,
    ) -> None:
        """Write the staged rows of `staging` as the commit of `revision` (see the module's docstring);
        `history`: insert their history rows too; `fill`: give the history rows stored by
        reference through their Records their values first (not needed when `stage_rows` staged them);
        `materialise`: write the Records' and Links' rows (false on an overlay branch, which has
        none: its history rows are its state, docs/branches.md). The staged rows go."""
        driver = await self.driver()
        args = (domain_id, branch, staging)
        rows: list[tuple[str, str, tuple[Any, ...]]] = [
            ("delete records", _DELETE_RECORDS, args),
            ("delete links", _DELETE_LINKS, args),
            ("update records", _UPDATE_RECORDS, (*args, revision)),
            ("upsert records", _UPSERT_RECORDS, (*args, revision)),
            ("upsert links", _UPSERT_LINKS, (*args, revision)),
        ]
        steps: list[tuple[str, str, tuple[Any, ...]]] = [
            *([("fill", _FILL, args)] if fill and materialise else []),
            *(rows if materialise else []),
            *([("insert history", _HISTORY, (*args, revision, generation))] if history else []),
            ("forget", _FORGET, (staging,)),
        ]
        took: list[str] = []
        for name, statement, values in steps:
            started = time.perf_counter()
            status = await driver.execute(statement, *values)
            took.append(f"{name} {status.rsplit(' ', 1)[-1]} in {time.perf_counter() - started:.2f} s")
        logger.info("staged rows %s written: %s", staging, "; ".join(took))

    async def drop_staged_rows(
        self, staging: str, refs: list[tuple[str, str, str]]
    ) -> list[tuple[str, str, str, Any]]:
        """Remove the staged rows of these (entity, name, key); the (entity, name, key, writes) of
        those that were there."""
        driver = await self.driver()
        found = await driver.fetch(
            _DROP, staging, [r[0] for r in refs], [r[1] for r in refs], [r[2] for r in refs]
        )
        return [(row[0], row[1], row[2], row[3]) for row in found]

    async def staged_elements(self, staging: str) -> AsyncIterator[tuple[str, str, str, bytes]]:
        """(entity, name, key, element) of each staged row, in the order of the changes."""
        driver = await self.driver()
        async for row in driver.cursor(_ELEMENTS, staging, prefetch=10_000):
            yield row[0], row[1], row[2], row[3]

    async def staged_value_deltas(
        self,
        staging: str,
        attributes: dict[tuple[str, str], int],
        keys: list[tuple[str, str]] | None = None,
    ) -> dict[tuple[str, str], dict[str, int] | None]:
        """Per (Kind, Attribute) -> at most so many values: what the staged Record changes naming it
        (of these (Kind, key) only, when given) add to the count of each of its values (negative: take
        away), by the value's text as PostgreSQL gives it (`->>`, as `value_counts` groups). None for
        one whose changes move more values than that; absent: they move none. GROUP BY in
        PostgreSQL, one pass over the staged rows of those Kinds; no row read into the caller."""
        if not attributes:
            return {}
        wanted = list(attributes.items())
        args: list[Any] = [
            staging,
            [kind for (kind, _), _ in wanted],
            [name for (_, name), _ in wanted],
            [cap for _, cap in wanted],
        ]
        statement = _VALUE_DELTAS.format(keys="")
        if keys is not None:
            if not keys:
                return {}
            statement = _VALUE_DELTAS.format(keys=_OF_KEYS)
            args += [[kind for kind, _ in keys], [key for _, key in keys]]
        driver = await self.driver()
        out: dict[tuple[str, str], dict[str, int] | None] = {}
        for kind, name, value, delta in await driver.fetch(statement, *args):
            if value is None:
                out[(kind, name)] = None
                continue
            moved = out.setdefault((kind, name), {})
            if moved is not None:
                moved[value] = int(delta)
        return out

    async def hold_staged_rows(self, staging: str) -> int:
        """How many rows `staging` has, none of them deleted by another transaction until this one
        ends (the module's docstring)."""
        driver = await self.driver()
        await driver.execute(
            "SELECT pg_advisory_xact_lock_shared($1, 0), pg_advisory_xact_lock($2, hashtext($3))",
            _CLEAR,
            _STAGING,
            staging,
        )
        return int(await driver.fetchval("SELECT count(*) FROM staged_rows WHERE staging = $1", staging))

    async def forget_staged_rows(self, staging: str) -> None:
        """Remove the rows of `staging`, after the commit that holds them, if one does."""
        driver = await self.driver()
        await driver.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", _STAGING, staging)
        await driver.execute(_FORGET, staging)

    async def end_sessions(self, application_name: str) -> None:
        """End the sessions of a staging whose process ended without an answer (their
        application_name its staging id), each waited for until it is gone: a chunk of rows it was
        sending commits before, or never."""
        driver = await self.driver()
        await driver.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE application_name = $1 AND pid <> pg_backend_pid()",
            application_name,
        )

    async def clear_staged_rows(self) -> int:
        """Remove the rows of every staging whose keeper is gone (its liveness mark free: the
        module's docstring), after the commits that hold some (a keeper starting: what a stopped
        one staged is of no use); how many."""
        await self.conn.execute(text("SELECT pg_advisory_xact_lock(:key, 0)"), {"key": _CLEAR})
        result = await self.conn.execute(text(_CLEAR_GONE))
        return int(result.rowcount or 0)


__all__ = ["COLUMNS", "PLACEHOLDER", "StagedRowsTxn"]
