"""Authentication (keys as digests) and authorization (roles, branch patterns, Kind narrowing).

Every keeper call authenticates the credential of its `authorization` metadata and asks an
`Access` whether the principal holds a permission on a branch, and which Kinds it may read there.
A credential is an API key or a web session made from one (lorebase_keeper.admin.web_sessions):
the same principal with the same grants, until it expires or is revoked; or an access token of a
configured identity provider (lorebase.oidc): a person, signed in as the principal its
claims name (created on first sight), with the grants its groups bring besides those given to it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from lorebase.contract.policy import ADMIN, ROLES
from lorebase.credentials import ADMIN_PRINCIPAL, key_digest, presented_digest, unknown_credential
from lorebase.oidc import Identity, OidcVerifier, looks_like_jwt
from lorebase.problems import Problem
from lorebase.settings_model import Oidc, OidcGrant
from lorebase_store import CredentialRow, Database, GrantRow, Txn


@dataclass(frozen=True)
class Principal:
    id: str
    type: str
    name: str

    @property
    def is_admin(self) -> bool:
        return self.id == ADMIN_PRINCIPAL


@dataclass(frozen=True)
class Access:
    """What one principal may do in one Domain."""

    principal: Principal
    grants: tuple[GrantRow, ...]
    # What it may read per (Domain, branch), built on first use (lorebase_keeper.access.readable).
    views: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def grants_digest(self) -> str:
        """What the grants allow, as a digest: the same for two principals whose grants allow the
        same (role, branch patterns, Kinds), different otherwise. What a read shows depends on this
        and on nothing else about the caller, so read caches key answers by it
        (lorebase_keeper.read_cache)."""
        if self.principal.is_admin:
            return "admin"
        allowed = sorted(
            (g.role, tuple(g.branches), None if g.kinds is None else tuple(sorted(g.kinds)))
            for g in self.grants
        )
        return hashlib.sha256(repr(allowed).encode()).hexdigest()

    def _matching(self, branch: str) -> list[GrantRow]:
        return [g for g in self.grants if any(fnmatch.fnmatchcase(branch, p) for p in g.branches)]

    def permissions(self, branch: str) -> frozenset[str]:
        if self.principal.is_admin:
            return ADMIN
        perms: set[str] = set()
        for grant in self._matching(branch):
            perms |= ROLES.get(grant.role, frozenset())
        return frozenset(perms)

    def roles(self, branch: str) -> frozenset[str]:
        if self.principal.is_admin:
            return frozenset({"admin"})
        return frozenset(g.role for g in self._matching(branch))

    def can(self, permission: str, branch: str) -> bool:
        return permission in self.permissions(branch)

    def readable_kinds(self, branch: str, all_kinds: list[str]) -> list[str]:
        """The Kinds the principal may read on `branch`, in schema order (empty: none)."""
        if self.principal.is_admin:
            return list(all_kinds)
        allowed: set[str] = set()
        for grant in self._matching(branch):
            if "data.read" not in ROLES.get(grant.role, frozenset()):
                continue
            if grant.kinds is None:
                return list(all_kinds)
            allowed.update(grant.kinds)
        return [kind for kind in all_kinds if kind in allowed]

    def narrowed(self, branch: str) -> bool:
        """True when no grant covering `branch` reads every Kind (history reads need one)."""
        if self.principal.is_admin:
            return False
        return not any(
            g.kinds is None and "data.read" in ROLES.get(g.role, frozenset()) for g in self._matching(branch)
        )

    def require(self, permission: str, branch: str) -> None:
        if not self.can(permission, branch):
            raise Problem(
                403,
                "forbidden",
                f"{self.principal.id} lacks {permission} on branch {branch!r}; ask a Domain admin for a grant",
                permission=permission,
                branch=branch,
            )


class Authenticator:
    """Resolves credentials and grants, with a short cache (keeper.auth.authz.grants_cache_ttl_s).

    A request whose credential and grants are cached costs no statement; a miss reads each with one
    statement outside a transaction (one round trip: a single statement reads one snapshot)."""

    def __init__(self, db: Database, *, ttl_s: float, oidc: Oidc | None = None) -> None:
        self.db = db
        self.ttl_s = ttl_s
        self.oidc = OidcVerifier(oidc) if oidc is not None and oidc.issuers else None
        self._principals: dict[str, tuple[float, Principal | None]] = {}
        self._access: dict[tuple[str, int], tuple[float, Access]] = {}
        # Signed in through an identity provider: the grants its groups bring, by principal.
        self._mapped: dict[str, tuple[OidcGrant, ...]] = {}
        self._domain_names: dict[int, str | None] = {}

    def forget(self) -> None:
        """Drop the caches (after a key is revoked or a grant changes in this process)."""
        self._principals.clear()
        self._access.clear()

    async def authenticate(self, authorization: str | None) -> Principal:
        """The principal of a live credential, or 401. A credential is remembered for the cache time,
        never past its expiry (a web session stops at `expires_at` even while cached); a revocation
        in this process forgets every one at once (`forget`)."""
        digest = presented_digest(authorization)
        now = time.monotonic()
        cached = self._principals.get(digest)
        if self.oidc is not None and (cached is None or cached[0] < now):
            token = (authorization or "").partition(" ")[2].strip()
            if looks_like_jwt(token):
                return await self._signed_in(digest, token, now)
        if cached is None or cached[0] < now:
            row = await self.db.read_one("credential_for_digest", _credential_for_digest, digest)
            principal = (
                None if row is None else Principal(row.principal.id, row.principal.type, row.principal.name)
            )
            until = now + self.ttl_s
            if row is not None and row.expires_at is not None:
                until = min(until, now + (row.expires_at - datetime.now(UTC)).total_seconds())
            self._principals[digest] = (until, principal)
            if len(self._principals) > 10000:
                self._principals.clear()
        else:
            principal = cached[1]
        if principal is None:
            raise unknown_credential()
        return principal

    async def _signed_in(self, digest: str, token: str, now: float) -> Principal:
        """The principal of an identity provider's access token (created on first sight)."""
        identity = await self.verify_token(token)
        principal = Principal(identity.principal_id, "user", identity.name)
        until = min(now + self.ttl_s, now + identity.expires_at - time.time())
        self._principals[digest] = (until, principal)
        return principal

    async def verify_token(self, token: str) -> Identity:
        """Who an access token names: verified (lorebase.oidc), not signed out of (the web app's
        sign-out ends the token it holds: lorebase_keeper.admin.web_sessions), its principal created
        on first sight and the grants its claims bring remembered for `access`."""
        if self.oidc is None:
            raise unknown_credential()
        identity = await self.oidc.verify(token)
        if await self.db.read_one("token_ended", _token_ended, key_digest(token)):
            raise unknown_credential("this token was signed out; sign in again")
        if identity.principal_id not in self._mapped:
            await self.db.run_interaction(
                "oidc_principal", _insert_principal, identity.principal_id, identity.name
            )
        self._mapped[identity.principal_id] = identity.grants
        return identity

    async def _mapped_grants(self, principal: Principal, domain_id: int) -> tuple[GrantRow, ...]:
        mapped = self._mapped.get(principal.id)
        if not mapped:
            return ()
        if domain_id not in self._domain_names:
            self._domain_names[domain_id] = await self.db.read_one("domain_name", _domain_name, domain_id)
        name = self._domain_names[domain_id]
        return tuple(
            GrantRow(
                f"oidc_{index}",
                domain_id,
                principal.id,
                grant.role,
                tuple(grant.branches),
                None if grant.kinds is None else tuple(grant.kinds),
            )
            for index, grant in enumerate(mapped)
            if grant.domain == name
        )

    async def access(self, principal: Principal, domain_id: int) -> Access:
        """The principal's grants in the Domain; the same Access for the cache time, so that what it
        may read is worked out once (Access.views)."""
        now = time.monotonic()
        cache_key = (principal.id, domain_id)
        cached = self._access.get(cache_key)
        if cached is not None and cached[0] >= now and cached[1].principal == principal:
            return cached[1]
        grants = tuple(await self.db.read_one("grants_of", _grants_of, principal.id, domain_id))
        grants += await self._mapped_grants(principal, domain_id)
        access = Access(principal, grants)
        self._access[cache_key] = (now + self.ttl_s, access)
        if len(self._access) > 10000:
            self._access.clear()
        return access


async def _credential_for_digest(txn: Txn, digest: str) -> CredentialRow | None:
    return await txn.credential_for_digest(digest)


async def _token_ended(txn: Txn, digest: str) -> bool:
    return await txn.token_ended(digest)


async def _insert_principal(txn: Txn, principal_id: str, name: str) -> None:
    await txn.insert_principal(principal_id, "user", name, datetime.now(UTC))


async def _domain_name(txn: Txn, domain_id: int) -> str | None:
    return await txn.domain_name(domain_id)


async def _grants_of(txn: Txn, principal_id: str, domain_id: int) -> list[GrantRow]:
    return await txn.grants_of(principal_id, domain_id)


__all__ = ["ADMIN_PRINCIPAL", "ROLES", "Access", "Authenticator", "Principal"]
