"""Domains and their branches (heads, protection, fork points)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import branches, domains
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


def _domain(row: Any) -> DomainRow:
    return DomainRow(row.id, row.name, row.default_branch, row.schema, row.settings, row.created_at)


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
    )


class DomainsTxn(TxnBase):
    async def get_domain(self, name: str) -> DomainRow | None:
        row = (await self.conn.execute(select(domains).where(domains.c.name == name))).first()
        return None if row is None else _domain(row)

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
        stmt = select(branches).where(branches.c.domain_id == domain_id, branches.c.name == name)
        if for_update:
            stmt = stmt.with_for_update()
        row = (await self.conn.execute(stmt)).first()
        return None if row is None else _branch(row)

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
                required_approvals=1 if protected else 0,
                from_branch=from_branch,
                fork_generation=fork_generation,
                mode=mode,
                created_by=by,
                created_at=at,
            )
            .on_conflict_do_nothing(index_elements=["domain_id", "name"])
        )
        return bool(result.rowcount)

    async def move_head(self, domain_id: int, name: str, head: str, generation: int) -> None:
        await self.conn.execute(
            update(branches)
            .where(branches.c.domain_id == domain_id, branches.c.name == name)
            .values(head=head, generation=generation)
        )


__all__ = ["BranchRow", "DomainRow", "DomainsTxn"]
