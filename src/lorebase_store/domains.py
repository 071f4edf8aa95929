"""Domains and their branches (heads, protection, fork points)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import cast, delete, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.commits import OUTBOX_CHANNEL
from lorebase_store.records import RecordRow
from lorebase_store.stored_form import FILL
from lorebase_store.tables import (
    branch_merges,
    branches,
    domains,
    history,
    links,
    records,
    revisions,
    statistics,
)
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class DomainRow:
    id: int
    name: str
    default_branch: str
    schema: dict[str, Any]
    settings: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class BranchRow:
    domain_id: int
    name: str
    head: str | None
    generation: int
    protected: bool
    required_approvals: int
    from_branch: str | None
    fork_generation: int | None
    mode: str
    created_by: str
    created_at: datetime
    chain: list[list[Any]] | None = None
    # The schema version of its head (revisions.schema_digest; None: the creation schema). Read by
    # get_branch and the commit path's lock (lock_branches); listings leave it None.
    schema_digest: str | None = None


def _domain(row: Any) -> DomainRow:
    return DomainRow(row.id, row.name, row.default_branch, row.schema, row.settings, row.created_at)


# Locks the rows of a commit group's branches in the order of their names (two groups never wait
# for each other in a cycle), reads the Records the group touches, takes the transaction's xid (the
# outbox fence needs it held before the commit statement takes an outbox sequence; the row lock takes
# one anyway) and queues the relay's wake-up (sent only if the transaction commits): one round trip.
# With SKIP LOCKED, a branch another transaction holds is answered as busy ('s') instead.
_LOCK_BRANCHES = (
    """
WITH locked AS (
  SELECT * FROM branches WHERE domain_id = $1 AND name = ANY(CAST($2 AS text[])) ORDER BY name {lock}
), seen AS (
  SELECT name, generation FROM branches WHERE domain_id = $1 AND name = ANY(CAST($2 AS text[]))
), wanted AS (
  SELECT * FROM unnest(CAST($3 AS text[]), CAST($4 AS text[]), CAST($5 AS text[])) AS w(branch, kind, key)
)
SELECT 'b' AS part, l.domain_id, l.name, l.head, l.generation, l.protected, l.required_approvals,
       l.from_branch, l.fork_generation, l.mode, l.created_by, l.created_at, l.chain,
       (SELECT s.generation FROM seen s WHERE s.name = l.name) AS seen_generation,
       (SELECT v.schema_digest FROM revisions v WHERE v.domain_id = $1 AND v.id = l.head) AS schema_digest,
       pg_current_xact_id()::text AS xid, pg_notify('"""
    + OUTBOX_CHANNEL
    + """', '') IS NULL AS notified,
       NULL::text AS kind, NULL::text AS key, NULL::jsonb AS "values", NULL::jsonb AS provenance,
       NULL::text AS created_revision, NULL::text AS updated_revision
FROM locked l
UNION ALL
SELECT 'r', NULL, r.branch, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL::jsonb, NULL, NULL, NULL,
       NULL, r.kind, r.key, r."values", r.provenance, r.created_revision, r.updated_revision
FROM records r JOIN wanted w ON r.branch = w.branch AND r.kind = w.kind AND r.key = w.key
WHERE r.domain_id = $1
UNION ALL
SELECT 's', NULL, s.name, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL::jsonb, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM seen s WHERE s.name NOT IN (SELECT name FROM locked)
"""
)
_LOCK_WAITING = _LOCK_BRANCHES.replace("{lock}", "FOR UPDATE")
_LOCK_SKIPPING = _LOCK_BRANCHES.replace("{lock}", "FOR UPDATE SKIP LOCKED")


def _branch(row: Any) -> BranchRow:
    return BranchRow(
        domain_id=row.domain_id,
        name=row.name,
        head=row.head,
        generation=row.generation,
        protected=row.protected,
        required_approvals=row.required_approvals,
        from_branch=row.from_branch,
        fork_generation=row.fork_generation,
        mode=row.mode,
        created_by=row.created_by,
        created_at=row.created_at,
        chain=row.chain,
    )


def _branch_record(row: Any) -> BranchRow:
    """A branch from an asyncpg record (the commit path's lock)."""
    return BranchRow(**{name: row[name] for name in _BRANCH_FIELDS})


_BRANCH_FIELDS = (
    "domain_id",
    "name",
    "head",
    "generation",
    "protected",
    "required_approvals",
    "from_branch",
    "fork_generation",
    "mode",
    "created_by",
    "created_at",
    "chain",
)


_GET_BRANCH = (
    f"SELECT {', '.join('b.' + f for f in _BRANCH_FIELDS)}, "
    "(SELECT v.schema_digest FROM revisions v WHERE v.domain_id = b.domain_id AND v.id = b.head) AS schema_digest "
    "FROM branches b WHERE b.domain_id = $1 AND b.name = $2"
)
_GET_BRANCH_FOR_UPDATE = _GET_BRANCH + " FOR UPDATE OF b"


class DomainsTxn(TxnBase):
    async def get_domain(self, name: str) -> DomainRow | None:
        row = (await self.conn.execute(select(domains).where(domains.c.name == name))).first()
        return None if row is None else _domain(row)

    async def domain_name(self, domain_id: int) -> str | None:
        return await self.conn.scalar(select(domains.c.name).where(domains.c.id == domain_id))

    async def list_domains(self) -> list[DomainRow]:
        return [_domain(row) for row in await self.conn.execute(select(domains).order_by(domains.c.name))]

    async def insert_domain(
        self,
        name: str,
        default_branch: str,
        schema: dict[str, Any],
        settings: dict[str, Any],
        by: str,
        at: datetime,
    ) -> DomainRow | None:
        """Insert a Domain; None when the name is taken."""
        row = (
            await self.conn.execute(
                pg_insert(domains)
                .values(
                    name=name,
                    default_branch=default_branch,
                    schema=schema,
                    settings=settings,
                    created_by=by,
                    created_at=at,
                )
                .on_conflict_do_nothing(index_elements=["name"])
                .returning(*domains.c)
            )
        ).first()
        return None if row is None else _domain(row)

    async def get_branch(self, domain_id: int, name: str, *, for_update: bool = False) -> BranchRow | None:
        """A branch row (locked with `for_update`). Every read looks its branch up first: the
        statement goes to the driver, prepared once per connection (TxnBase.driver)."""
        driver = await self.driver()
        row = await driver.fetchrow(_GET_BRANCH_FOR_UPDATE if for_update else _GET_BRANCH, domain_id, name)
        return None if row is None else replace(_branch_record(row), schema_digest=row["schema_digest"])

    async def lock_branches(
        self, domain_id: int, wanted: dict[str, list[tuple[str, str]]], *, skip_locked: bool = False
    ) -> tuple[dict[str, tuple[BranchRow, dict[tuple[str, str], RecordRow] | None]], list[str]]:
        """Lock the rows of the branches a commit group writes (`wanted`'s keys) and read the Records
        the group will touch on each (its values: (kind, key)), in one statement: the locked
        branches, and the names of those another transaction held (`skip_locked`: not waited for).
        A branch that does not exist is in neither.

        The Records come from the statement's snapshot; when the lock of a branch had to wait for
        another commit, that snapshot predates it, and None is returned for that branch's Records
        (read them again).
        """
        refs = [(branch, kind, key) for branch, pairs in wanted.items() for kind, key in pairs]
        driver = await self.driver()
        rows = await driver.fetch(
            _LOCK_SKIPPING if skip_locked else _LOCK_WAITING,
            domain_id,
            sorted(wanted),
            [branch for branch, _, _ in refs],
            [kind for _, kind, _ in refs],
            [key for _, _, key in refs],
        )
        branches_found: dict[str, BranchRow] = {}
        fresh: dict[str, bool] = {}
        found: dict[str, dict[tuple[str, str], RecordRow]] = {}
        busy: list[str] = []
        for row in rows:
            if row["part"] == "s":
                busy.append(row["name"])
            elif row["part"] == "b":
                branch = replace(_branch_record(row), schema_digest=row["schema_digest"])
                branches_found[branch.name] = branch
                fresh[branch.name] = row["seen_generation"] == row["generation"]
                self.outbox_xid_held = True
            else:
                found.setdefault(row["name"], {})[(row["kind"], row["key"])] = RecordRow(
                    row["kind"],
                    row["key"],
                    row["values"],
                    row["provenance"],
                    row["created_revision"],
                    row["updated_revision"],
                )
        locked = {
            name: (branch, found.get(name, {}) if fresh[name] else None)
            for name, branch in branches_found.items()
        }
        return locked, sorted(busy)

    async def list_branches(self, domain_id: int) -> list[BranchRow]:
        rows = await self.conn.execute(
            select(branches).where(branches.c.domain_id == domain_id).order_by(branches.c.name)
        )
        return [_branch(row) for row in rows]

    async def insert_branch(
        self,
        domain_id: int,
        name: str,
        *,
        head: str | None,
        generation: int,
        protected: bool,
        from_branch: str | None,
        fork_generation: int | None,
        mode: str,
        by: str,
        at: datetime,
        chain: list[list[Any]] | None = None,
        required_approvals: int | None = None,
    ) -> bool:
        """Insert a branch; False when one of that name exists."""
        result = await self.conn.execute(
            pg_insert(branches)
            .values(
                domain_id=domain_id,
                name=name,
                head=head,
                generation=generation,
                protected=protected,
                required_approvals=(1 if protected else 0)
                if required_approvals is None
                else required_approvals,
                from_branch=from_branch,
                fork_generation=fork_generation,
                mode=mode,
                created_by=by,
                created_at=at,
                chain=chain,
            )
            .on_conflict_do_nothing(index_elements=["domain_id", "name"])
        )
        return bool(result.rowcount)

    async def update_branch(self, domain_id: int, name: str, **values: Any) -> None:
        await self.conn.execute(
            update(branches)
            .where(branches.c.domain_id == domain_id, branches.c.name == name)
            .values(**values)
        )

    async def count_branches_like(self, domain_id: int, prefix: str, created_by: str) -> list[str]:
        """Names of the branches under `prefix` that `created_by` created."""
        rows = await self.conn.execute(
            select(branches.c.name)
            .where(
                branches.c.domain_id == domain_id,
                branches.c.name.startswith(prefix, autoescape=True),
                branches.c.created_by == created_by,
            )
            .order_by(branches.c.name)
        )
        return [row.name for row in rows]

    async def archive_branch(self, domain_id: int, name: str, archived: str) -> None:
        """Delete a branch, keeping its Revisions and history under the name `archived` (which no live
        branch can take), so that the name can be used again without meeting the old history."""
        # History rows that read their values through this branch's Records (stored_form.py) keep them.
        await self.conn.execute(text(FILL), {"domain_id": domain_id, "branch": name})
        for table in (revisions, history):
            await self.conn.execute(
                update(table)
                .where(table.c.domain_id == domain_id, table.c.branch == name)
                .values(branch=archived)
            )
        for table in (records, links, statistics):
            await self.conn.execute(
                delete(table).where(table.c.domain_id == domain_id, table.c.branch == name)
            )
        await self.conn.execute(
            text("DELETE FROM embeddings WHERE domain_id = :d AND branch = :b"), {"d": domain_id, "b": name}
        )
        await self.conn.execute(
            delete(branches).where(branches.c.domain_id == domain_id, branches.c.name == name)
        )
        await self.conn.execute(
            delete(branch_merges).where(
                branch_merges.c.domain_id == domain_id,
                (branch_merges.c.source == name) | (branch_merges.c.target == name),
            )
        )
        # Histories that ran through the branch (a fast-forward, a fork) now name the archive.
        rows = await self.conn.execute(
            select(branches.c.name, branches.c.chain).where(
                branches.c.domain_id == domain_id,
                branches.c.chain.contains(cast([[name]], JSONB)),
            )
        )
        for row in rows.all():
            chain = [[archived if seg[0] == name else seg[0], *seg[1:]] for seg in row.chain]
            await self.update_branch(domain_id, row.name, chain=chain)


__all__ = ["BranchRow", "DomainRow", "DomainsTxn"]
