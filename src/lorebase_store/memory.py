"""Agent memory: principals' tenants, memory grants, records, reviews, receipts and the integrity index."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, text, update

from lorebase_store.memory_tables import (
    memory_grants,
    memory_records,
)
from lorebase_store.tables import principals
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class MemoryPrincipal:
    id: str
    type: str
    tenant: str


@dataclass(frozen=True)
class MemoryGrantRow:
    id: str
    tenant: str
    principal_id: str
    project_id: str
    mission_id: str | None
    agent_id: str
    capabilities: tuple[str, ...]


@dataclass(frozen=True)
class MemoryRecordRow:
    id: str
    namespace_key: str
    tenant: str
    project_id: str
    mission_id: str | None
    agent_id: str
    visibility: str
    subject: str
    record_revision: int
    status: str  # active | deleted
    content: Any
    content_digest: str | None
    derived_from: list[str]
    valid_until_millis: int | None
    embedding: dict[str, Any] | None
    review: dict[str, Any] | None
    created_by: str
    created_at_millis: int
    updated_by: str
    updated_at_millis: int


@dataclass(frozen=True)
class MemoryReceipt:
    command: str
    request_digest: str
    status: int
    response: dict[str, Any]


_RECORD_FIELDS = [f.name for f in fields(MemoryRecordRow)]

_CAPABILITIES = """
SELECT capabilities FROM memory_grants
 WHERE principal_id = $1 AND tenant = $2 AND project_id = $3 AND agent_id = $4
   AND mission_id IS NOT DISTINCT FROM $5::text
"""


def record_row(columns: Mapping[str, Any]) -> MemoryRecordRow:
    """A memory record from its columns (a row's mapping, or the object of to_jsonb(row))."""
    return MemoryRecordRow(**{name: columns[name] for name in _RECORD_FIELDS})


def _record(row: Any) -> MemoryRecordRow:
    return record_row(row._mapping)


# The principal of an API key digest (live: not revoked, not expired); built once, it runs on every memory request.
def _grant(row: Any) -> MemoryGrantRow:
    return MemoryGrantRow(
        row.id,
        row.tenant,
        row.principal_id,
        row.project_id,
        row.mission_id,
        row.agent_id,
        tuple(row.capabilities),
    )


class MemoryTxn(TxnBase):
    async def synchronous_commit(self) -> None:
        """Make this transaction's commit wait for its WAL flush (whatever the server default)."""
        await self.conn.execute(text("SET LOCAL synchronous_commit = on"))

    async def memory_principal(self, principal_id: str) -> MemoryPrincipal | None:
        stmt = select(principals.c.id, principals.c.type, principals.c.tenant).where(
            principals.c.id == principal_id
        )
        row = (await self.conn.execute(stmt)).first()
        return None if row is None else MemoryPrincipal(row.id, row.type, row.tenant)

    async def set_principal_tenant(self, principal_id: str, tenant: str) -> None:
        await self.conn.execute(
            update(principals).where(principals.c.id == principal_id).values(tenant=tenant)
        )

    # Grants

    async def insert_memory_grant(self, grant: MemoryGrantRow, created_by: str, at: datetime) -> None:
        await self.conn.execute(
            insert(memory_grants).values(
                id=grant.id,
                tenant=grant.tenant,
                principal_id=grant.principal_id,
                project_id=grant.project_id,
                mission_id=grant.mission_id,
                agent_id=grant.agent_id,
                capabilities=list(grant.capabilities),
                created_by=created_by,
                created_at=at,
            )
        )

    async def delete_memory_grant(self, grant_id: str) -> MemoryGrantRow | None:
        row = (
            await self.conn.execute(
                delete(memory_grants).where(memory_grants.c.id == grant_id).returning(*memory_grants.c)
            )
        ).first()
        return None if row is None else _grant(row)

    async def memory_capabilities(
        self, principal_id: str, tenant: str, project_id: str, mission_id: str | None, agent_id: str
    ) -> set[str]:
        """The capabilities the principal holds on exactly this scope (project, mission, agent)."""
        driver = await self.driver()  # every memory request asks it: through the driver
        rows = await driver.fetch(_CAPABILITIES, principal_id, tenant, project_id, agent_id, mission_id)
        held: set[str] = set()
        for row in rows:
            held.update(row["capabilities"])
        return held

    # Records

    async def get_memory_record(self, record_id: str) -> MemoryRecordRow | None:
        row = (
            await self.conn.execute(select(memory_records).where(memory_records.c.id == record_id))
        ).first()
        return None if row is None else _record(row)

    async def memory_records_page(
        self,
        namespace_key: str,
        after_id: str | None,
        limit: int,
        *,
        include_unavailable: bool,
        now_millis: int,
    ) -> list[MemoryRecordRow]:
        stmt = select(memory_records).where(memory_records.c.namespace_key == namespace_key)
        if after_id is not None:
            stmt = stmt.where(memory_records.c.id > after_id)
        if not include_unavailable:
            stmt = stmt.where(
                memory_records.c.status == "active",
                (memory_records.c.valid_until_millis.is_(None))
                | (memory_records.c.valid_until_millis > now_millis),
            )
        rows = await self.conn.execute(stmt.order_by(memory_records.c.id).limit(limit))
        return [_record(row) for row in rows]


__all__ = [
    "MemoryGrantRow",
    "MemoryPrincipal",
    "MemoryReceipt",
    "MemoryRecordRow",
    "MemoryTxn",
    "record_row",
]
