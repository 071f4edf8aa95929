"""Schema versions: every schema document a Domain has had, by the SHA-256 of its canonical JSON
(migration 0018), and which version each branch head stands on.

A Revision names the version it was committed under (`revisions.schema_digest`; NULL is the
Domain's creation schema, `domains.schema`). A version is written in the transaction of the
Revision that first names it, and never changes: its digest is its content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import (
    branches,
    reconciliation_candidates,
    revisions,
    schema_change_sets,
    schema_versions,
    source_keys,
    statistics,
)
from lorebase_store.txn import TxnBase

if TYPE_CHECKING:  # domains.py imports commits.py, which imports this module
    from lorebase_store.domains import DomainRow


class SchemaVersionsTxn(TxnBase):
    async def schema_version(self, domain_id: int, digest: str) -> dict[str, Any] | None:
        """The schema document of a version, or None when the Domain has no such version."""
        row = (
            await self.conn.execute(
                select(schema_versions.c.document).where(
                    schema_versions.c.domain_id == domain_id, schema_versions.c.digest == digest
                )
            )
        ).first()
        return None if row is None else dict(row.document)

    async def schema_document(self, domain: DomainRow, digest: str | None) -> dict[str, Any]:
        """The schema document a Revision or branch head names (None: the creation schema)."""
        if digest is None:
            return domain.schema
        return await self.schema_version(domain.id, digest) or domain.schema

    async def put_schema_change_set(
        self, domain_id: int, revision: str, changes: list[dict[str, Any]], at: Any
    ) -> None:
        """Keep the change set a schema-changing Revision applied (migration 0019)."""
        await self.conn.execute(
            pg_insert(schema_change_sets)
            .values(domain_id=domain_id, revision=revision, changes=changes, created_at=at)
            .on_conflict_do_nothing(index_elements=["domain_id", "revision"])
        )

    async def move_kind_rows(self, domain_id: int, branch: str, old: str, new: str) -> None:
        """A Kind renamed on a branch: its embeddings, statistics, Source keys and reconciliation
        candidates there follow it (its Records move in the commit; the other branches keep the old
        name)."""
        await self.conn.execute(
            text(
                "UPDATE embeddings SET kind = :new "
                "WHERE domain_id = :domain_id AND branch = :branch AND kind = :old"
            ),
            {"domain_id": domain_id, "branch": branch, "old": old, "new": new},
        )
        for table in (statistics, source_keys, reconciliation_candidates):
            await self.conn.execute(
                update(table)
                .where(table.c.domain_id == domain_id, table.c.branch == branch, table.c.kind == old)
                .values(kind=new)
            )

    async def schema_change_sets(self, domain_id: int, revision_ids: list[str]) -> dict[str, list[Any]]:
        """The change sets these Revisions applied, by Revision (one without a kept change set is left
        out: committed before migration 0019)."""
        if not revision_ids:
            return {}
        rows = await self.conn.execute(
            select(schema_change_sets.c.revision, schema_change_sets.c.changes).where(
                schema_change_sets.c.domain_id == domain_id,
                schema_change_sets.c.revision.in_(revision_ids),
            )
        )
        return {row.revision: list(row.changes) for row in rows}

    async def write_schema_versions(self, domain_id: int, rows: list[dict[str, Any]]) -> None:
        """Keep schema versions ({digest, document, created_at}); one already kept stays as it is."""
        if not rows:
            return
        await self.conn.execute(
            pg_insert(schema_versions)
            .values([{"domain_id": domain_id, **row} for row in rows])
            .on_conflict_do_nothing(index_elements=["domain_id", "digest"])
        )

    async def branch_schema_digests(self, domain_id: int) -> dict[str, str]:
        """The schema version of each branch whose head was committed under a named one (the others
        stand on the creation schema)."""
        rows = await self.conn.execute(
            select(branches.c.name, revisions.c.schema_digest)
            .select_from(
                branches.join(
                    revisions,
                    (revisions.c.domain_id == branches.c.domain_id) & (revisions.c.id == branches.c.head),
                )
            )
            .where(branches.c.domain_id == domain_id, revisions.c.schema_digest.is_not(None))
        )
        return {row.name: row.schema_digest for row in rows}

    async def branch_schema_digest(self, domain_id: int, branch: str) -> str | None:
        """The schema version of a branch's head (None: the creation schema, or no such branch)."""
        return await self.conn.scalar(
            select(revisions.c.schema_digest)
            .select_from(
                branches.join(
                    revisions,
                    (revisions.c.domain_id == branches.c.domain_id) & (revisions.c.id == branches.c.head),
                )
            )
            .where(branches.c.domain_id == domain_id, branches.c.name == branch)
        )


__all__ = ["SchemaVersionsTxn"]
