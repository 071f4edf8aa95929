"""Tokens of an organisation's identity provider (OpenID Connect), checked with PyJWT.

A bearer credential shaped as a JWT is checked against the issuers of `keeper.auth.oidc.issuers`
with PyJWT (a maintained JOSE library; no token code of our own): the issuer named by its `iss`
must be configured (else 401: an untrusted issuer), its signing keys come from the issuer's
discovery document (`<issuer>/.well-known/openid-configuration`, `jwks_uri`) and are fetched again
after `jwks_refresh_s`, and at once when a token names a key id the set does not hold (the issuer
rotated its keys; at most every MIN_REFETCH_S). The signature, `iss`, `aud` (the issuer's
`audience`), `exp` and `nbf` (with `leeway_s`) are verified; any failure is 401.

The token names a person: the principal `principal_prefix` + its `principal_claim`, a user, and the
grants its groups (`roles_claim`) bring per Domain (`roles`), besides the grants an admin gave that
principal. A multi-tenant issuer names the claim of a token's tenant (`tenant_claim`): only the
tenants listed are trusted, and a tenant's people are principals of their own
(`principal_prefix` + the tenant's name + `_` + the claim) with only that tenant's grants, so a
token of one tenant never reaches what another's hold, in any cache keyed by principal. Policies
apply to them unchanged (lorebase_keeper.access.auth).

Keeper checks access tokens with it; the gateway checks the ID token of the web app's sign-in with
it too (`verify_id_token`: the audience is the web client, and the nonce the sign-in sent), and
reads the issuer's endpoints from the same discovery document (`discovery`).
"""

from __future__ import annotations

import asyncio
import hmac
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt

from lorebase.credentials import unknown_credential
from lorebase.settings_model import Oidc, OidcGrant, OidcIssuer

MIN_REFETCH_S = 10.0  # an unknown key id fetches the keys again at most this often
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_NOT_NAME = re.compile(r"[^a-z0-9_]+")


def looks_like_jwt(token: str) -> bool:
    return _JWT.fullmatch(token) is not None


@dataclass(frozen=True)
class Identity:
    """Who a verified token names, and until when it is good."""

    principal_id: str
    name: str
    grants: tuple[OidcGrant, ...]
    expires_at: float  # unix seconds


@dataclass
class _Keys:
    discovery: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, Any] = field(default_factory=dict)  # kid -> PyJWK
    fetched_at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class OidcVerifier:
    def __init__(self, settings: Oidc) -> None:
        self.issuers = {issuer.issuer: issuer for issuer in settings.issuers}
        self.refresh_s = settings.jwks_refresh_s
        self.leeway_s = settings.leeway_s
        self._keys: dict[str, _Keys] = {name: _Keys() for name in self.issuers}

    async def _fetch(self, issuer: OidcIssuer, keys: _Keys) -> None:
        # A client per fetch: they are rare (every jwks_refresh_s), and nothing stays open.
        async with httpx.AsyncClient(timeout=10, trust_env=False, follow_redirects=False) as client:
            await self._fetch_with(client, issuer, keys)

    async def _fetch_with(self, client: httpx.AsyncClient, issuer: OidcIssuer, keys: _Keys) -> None:
        if not keys.discovery:
            found = await client.get(issuer.issuer.rstrip("/") + "/.well-known/openid-configuration")
            found.raise_for_status()
            discovery = found.json()
            if discovery.get("issuer") != issuer.issuer or not discovery.get("jwks_uri"):
                raise unknown_credential("the identity provider's discovery document names another issuer")
            keys.discovery = dict(discovery)
        answer = await client.get(str(keys.discovery["jwks_uri"]))
        answer.raise_for_status()
        keyset = jwt.PyJWKSet.from_dict(answer.json())
        keys.keys = {key.key_id or "": key for key in keyset.keys}
        keys.fetched_at = time.monotonic()

    async def _key(self, issuer: OidcIssuer, kid: str) -> Any:
        keys = self._keys[issuer.issuer]
        async with keys.lock:
            age = time.monotonic() - keys.fetched_at
            stale = not keys.keys or age > self.refresh_s
            rotated = kid not in keys.keys and age > MIN_REFETCH_S
            if stale or rotated:
                try:
                    await self._fetch(issuer, keys)
                except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as exc:
                    if not keys.keys:
                        raise unknown_credential(
                            f"the identity provider could not be reached ({exc})"
                        ) from exc
        key = keys.keys.get(kid)
        if key is None:
            raise unknown_credential("the token is signed with a key its issuer does not publish")
        return key

    async def discovery(self, issuer: OidcIssuer) -> dict[str, Any]:
        """The issuer's discovery document (its authorization and token endpoints), fetched with its
        keys and kept as long."""
        keys = self._keys[issuer.issuer]
        if not keys.discovery or time.monotonic() - keys.fetched_at > self.refresh_s:
            async with keys.lock:
                try:
                    await self._fetch(issuer, keys)
                except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as exc:
                    if not keys.discovery:
                        raise unknown_credential(
                            f"the identity provider could not be reached ({exc})"
                        ) from exc
        return keys.discovery

    async def _claims(self, token: str, audience: str | None) -> tuple[OidcIssuer, dict[str, Any]]:
        """The verified claims of a token of a configured issuer, for `audience` (None: the
        issuer's); 401 for anything else."""
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise unknown_credential(f"the token is not a JWT ({exc})") from exc
        issuer = self.issuers.get(str(unverified.get("iss", "")))
        if issuer is None:
            raise unknown_credential(
                "the token's issuer is not one Lorebase trusts (keeper.auth.oidc.issuers)"
            )
        key = await self._key(issuer, str(header.get("kid", "")))
        expected = issuer.audience if audience is None else audience
        try:
            claims = jwt.decode(
                token,
                key=key,
                algorithms=issuer.algorithms,
                audience=expected,
                issuer=issuer.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise unknown_credential("the token has expired; sign in again") from exc
        except jwt.InvalidAudienceError as exc:
            raise unknown_credential(
                f"the token is not for this API (its audience is not {expected})"
            ) from exc
        except jwt.PyJWTError as exc:
            raise unknown_credential(f"the token does not verify ({exc})") from exc
        return issuer, claims

    async def verify(self, token: str) -> Identity:
        """The identity an access token of a configured issuer names; 401 for anything else."""
        issuer, claims = await self._claims(token, None)
        return identity(issuer, claims)

    async def verify_id_token(self, token: str, *, issuer: OidcIssuer, client_id: str, nonce: str) -> str:
        """The subject of an ID token `issuer` issued to the web client `client_id` in answer to the
        sign-in that sent `nonce`; 401 for anything else (another issuer, audience or nonce)."""
        found, claims = await self._claims(token, client_id)
        if found.issuer != issuer.issuer:
            raise unknown_credential("the ID token comes from another issuer than the sign-in went to")
        sent = str(claims.get("nonce") or "")
        if not sent or not hmac.compare_digest(sent.encode(), nonce.encode()):
            raise unknown_credential("the ID token does not answer this sign-in (its nonce differs)")
        return str(claims.get("sub") or "")


def _local(value: Any) -> str:
    return _NOT_NAME.sub("_", str(value or "").lower()).strip("_")


def identity(issuer: OidcIssuer, claims: dict[str, Any]) -> Identity:
    """Who verified claims name, and the grants their groups (and tenant) bring."""
    subject = str(claims.get(issuer.principal_claim) or "")
    local = _local(subject)
    if not local:
        raise unknown_credential(f"the token has no {issuer.principal_claim} to name a principal by")
    groups = claims.get(issuer.roles_claim) or []
    if isinstance(groups, str):
        groups = groups.split()
    roles = issuer.roles
    grants: tuple[OidcGrant, ...] = ()
    prefix = issuer.principal_prefix
    if issuer.tenant_claim:
        value = str(claims.get(issuer.tenant_claim) or "")
        tenant = issuer.tenants.get(value)
        if tenant is None:
            raise unknown_credential(
                f"the token's tenant ({issuer.tenant_claim}: {value or 'none'}) is not one Lorebase trusts "
                "at this issuer (keeper.auth.oidc.issuers[].tenants)"
            )
        roles, grants, prefix = tenant.roles, tuple(tenant.grants), prefix + tenant.name + "_"
    grants += tuple(g for group in groups if isinstance(group, str) for g in roles.get(group, ()))
    name = str(claims.get(issuer.name_claim) or subject)[:200]
    return Identity((prefix + local)[:128], name, grants, float(claims["exp"]))


__all__ = ["Identity", "OidcVerifier", "identity", "looks_like_jwt"]
