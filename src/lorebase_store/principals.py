"""Principals, their keys (as digests only) and their grants."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from lorebase_store.tables import api_keys, grants, principals
from lorebase_store.txn import TxnBase


@dataclass(frozen=True)
class PrincipalRow:
    id: str
    type: str
    name: str
    tenant: str = ""  # the agent-memory namespace of the principal (lorebase.memory.access)


@dataclass(frozen=True)
class CredentialRow:
    """A live key (or web session) and its principal: `parent_key_id` names the key a web session
    was made from (None: an API key); `expires_at` when it stops authenticating (None: never)."""

    key_id: str
    principal: PrincipalRow
    parent_key_id: str | None
    expires_at: datetime | None


def live_key() -> ColumnElement[bool]:
    """The keys that authenticate: not revoked and not expired. Every service that reads a key by its
    digest (keeper, agent memory, the memory journal) asks this one condition."""
    return and_(
        api_keys.c.revoked_at.is_(None),
        or_(api_keys.c.expires_at.is_(None), api_keys.c.expires_at > func.now()),
    )


# The same condition in SQL text, for the statements written as text (lorebase_store.memory_writes).
LIVE_KEY_SQL = "{a}.revoked_at IS NULL AND ({a}.expires_at IS NULL OR {a}.expires_at > now())"


@dataclass(frozen=True)
class GrantRow:
    id: str
    domain_id: int
    principal_id: str
    role: str
    branches: tuple[str, ...]
    kinds: tuple[str, ...] | None


def _grant(row: Any) -> GrantRow:
    return GrantRow(
        id=row.id,
        domain_id=row.domain_id,
        principal_id=row.principal_id,
        role=row.role,
        branches=tuple(row.branches),
        kinds=None if row.kinds is None else tuple(row.kinds),
    )


# credential_for_digest without a lock, as one statement with the condition of live_key().
_CREDENTIAL = """
SELECT p.id, p.type, p.name, p.tenant, k.id AS key_id, k.parent_key_id, k.expires_at
  FROM principals p JOIN api_keys k ON k.principal_id = p.id
 WHERE k.digest = $1 AND {live_key}
""".format(live_key=LIVE_KEY_SQL.format(a="k"))


class PrincipalsTxn(TxnBase):
    async def get_principal(self, principal_id: str) -> PrincipalRow | None:
        row = (await self.conn.execute(select(principals).where(principals.c.id == principal_id))).first()
        return None if row is None else PrincipalRow(row.id, row.type, row.name, row.tenant)

    async def insert_principal(self, principal_id: str, type_: str, name: str, at: datetime) -> bool:
        """Insert a principal; False when the id is taken."""
        stmt = (
            pg_insert(principals)
            .values(id=principal_id, type=type_, name=name, created_at=at)
            .on_conflict_do_nothing(index_elements=["id"])
        )
        result = await self.conn.execute(stmt)
        return bool(result.rowcount)

    async def credential_for_digest(self, digest: str, *, lock: bool = False) -> CredentialRow | None:
        """The live key of a digest and its principal; `lock`: hold the key's row (FOR SHARE) to the
        end of the transaction, so that it cannot be revoked meanwhile (a web session made from it).
        The one lookup of a presented credential: keeper for Domain data and agent memory, and feed
        for the memory journal, all authenticate through it."""
        stmt = (
            select(
                principals.c.id,
                principals.c.type,
                principals.c.name,
                principals.c.tenant,
                api_keys.c.id.label("key_id"),
                api_keys.c.parent_key_id,
                api_keys.c.expires_at,
            )
            .join(api_keys, api_keys.c.principal_id == principals.c.id)
            .where(api_keys.c.digest == digest, live_key())
        )
        if not lock:  # every request's lookup: through the driver (TxnBase.driver)
            driver = await self.driver()
            found = await driver.fetchrow(_CREDENTIAL, digest)
            if found is None:
                return None
            return CredentialRow(
                found["key_id"],
                PrincipalRow(found["id"], found["type"], found["name"], found["tenant"]),
                found["parent_key_id"],
                found["expires_at"],
            )
        stmt = stmt.with_for_update(read=True, of=api_keys)
        row = (await self.conn.execute(stmt)).first()
        if row is None:
            return None
        return CredentialRow(
            row.key_id,
            PrincipalRow(row.id, row.type, row.name, row.tenant),
            row.parent_key_id,
            row.expires_at,
        )

    async def insert_key(self, key_id: str, principal_id: str, digest: str, at: datetime) -> None:
        await self.conn.execute(
            pg_insert(api_keys)
            .values(id=key_id, principal_id=principal_id, digest=digest, created_at=at)
            .on_conflict_do_nothing(index_elements=["digest"])
        )

    async def prune_web_sessions(self, parent_key_id: str) -> None:
        """Forget the sessions of a key that can no longer authenticate (expired; ended ones expire
        too), so that signing in again and again does not grow api_keys without end."""
        await self.conn.execute(
            delete(api_keys).where(
                api_keys.c.parent_key_id == parent_key_id, api_keys.c.expires_at <= func.now()
            )
        )

    async def insert_web_session(
        self,
        key_id: str,
        parent_key_id: str,
        principal_id: str,
        digest: str,
        at: datetime,
        expires_at: datetime,
    ) -> None:
        """A key derived from `parent_key_id` (which the caller holds FOR SHARE), valid until `expires_at`."""
        await self.conn.execute(
            insert(api_keys).values(
                id=key_id,
                principal_id=principal_id,
                digest=digest,
                created_at=at,
                expires_at=expires_at,
                parent_key_id=parent_key_id,
            )
        )

    async def token_ended(self, digest: str) -> bool:
        """Whether an identity provider's token was signed out of (`end_token`): such a token has a
        row only then."""
        found = await self.conn.execute(select(api_keys.c.id).where(api_keys.c.digest == digest).limit(1))
        return found.first() is not None

    async def end_token(
        self, key_id: str, principal_id: str, digest: str, at: datetime, expires_at: datetime
    ) -> bool:
        """Remember an identity provider's token as signed out of until it expires (a revoked row
        of api_keys; the principal's earlier ones that have expired are forgotten); False when it
        already was."""
        await self.conn.execute(
            delete(api_keys).where(
                api_keys.c.principal_id == principal_id,
                api_keys.c.parent_key_id.is_(None),
                api_keys.c.revoked_at.is_not(None),
                api_keys.c.expires_at <= func.now(),
            )
        )
        result = await self.conn.execute(
            pg_insert(api_keys)
            .values(
                id=key_id,
                principal_id=principal_id,
                digest=digest,
                created_at=at,
                revoked_at=at,
                expires_at=expires_at,
            )
            .on_conflict_do_nothing(index_elements=["digest"])
        )
        return bool(result.rowcount)

    async def revoke_key(self, principal_id: str, key_id: str, at: datetime) -> bool:
        """Revoke a key and the web sessions made from it (False: no such live key)."""
        result = await self.conn.execute(
            update(api_keys)
            .where(
                api_keys.c.id == key_id,
                api_keys.c.principal_id == principal_id,
                api_keys.c.revoked_at.is_(None),
            )
            .values(revoked_at=at)
        )
        # A statement of its own, after the key's row lock: it sees a session committed meanwhile.
        await self.conn.execute(
            update(api_keys)
            .where(api_keys.c.parent_key_id == key_id, api_keys.c.revoked_at.is_(None))
            .values(revoked_at=at)
        )
        return bool(result.rowcount)

    async def end_web_session(self, key_id: str, at: datetime) -> bool:
        """Revoke a web session (a derived key); False when it was no live session."""
        result = await self.conn.execute(
            update(api_keys)
            .where(
                api_keys.c.id == key_id,
                api_keys.c.parent_key_id.is_not(None),
                api_keys.c.revoked_at.is_(None),
            )
            .values(revoked_at=at)
        )
        return bool(result.rowcount)

    async def insert_grant(
        self,
        grant_id: str,
        domain_id: int,
        principal_id: str,
        role: str,
        branches: list[str],
        kinds: list[str] | None,
        created_by: str,
        at: datetime,
    ) -> None:
        await self.conn.execute(
            insert(grants).values(
                id=grant_id,
                domain_id=domain_id,
                principal_id=principal_id,
                role=role,
                branches=branches,
                kinds=kinds,
                created_by=created_by,
                created_at=at,
            )
        )

    async def get_grant(self, domain_id: int, grant_id: str) -> GrantRow | None:
        row = (
            await self.conn.execute(
                select(grants).where(and_(grants.c.domain_id == domain_id, grants.c.id == grant_id))
            )
        ).first()
        return None if row is None else _grant(row)

    async def delete_grant(self, domain_id: int, grant_id: str) -> GrantRow | None:
        row = (
            await self.conn.execute(
                delete(grants)
                .where(and_(grants.c.domain_id == domain_id, grants.c.id == grant_id))
                .returning(*grants.c)
            )
        ).first()
        return None if row is None else _grant(row)

    async def set_grant_kinds(self, domain_id: int, grant_id: str, kinds: list[str]) -> None:
        """Set the Kinds a narrowed grant reaches (a Kind renamed: the new name beside the old)."""
        await self.conn.execute(
            update(grants)
            .where(and_(grants.c.domain_id == domain_id, grants.c.id == grant_id))
            .values(kinds=kinds)
        )

    async def grants_in(self, domain_id: int) -> list[GrantRow]:
        """Every grant in a Domain."""
        rows = await self.conn.execute(
            select(grants).where(grants.c.domain_id == domain_id).order_by(grants.c.id)
        )
        return [_grant(row) for row in rows]

    async def grants_of(self, principal_id: str, domain_id: int) -> list[GrantRow]:
        rows = await self.conn.execute(
            select(grants)
            .where(grants.c.principal_id == principal_id, grants.c.domain_id == domain_id)
            .order_by(grants.c.id)
        )
        return [_grant(row) for row in rows]


__all__ = ["LIVE_KEY_SQL", "CredentialRow", "GrantRow", "PrincipalRow", "PrincipalsTxn", "live_key"]
