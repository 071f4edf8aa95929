"""Access tokens of an organisation's identity provider (OpenID Connect) as credentials.

A bearer credential shaped as a JWT is checked against the issuers of `keeper.auth.oidc.issuers`
with PyJWT (a maintained JOSE library; no token code of our own): the issuer named by its `iss`
must be configured (else 401: an untrusted issuer), its signing keys come from the issuer's
discovery document (`<issuer>/.well-known/openid-configuration`, `jwks_uri`) and are fetched again
after `jwks_refresh_s`, and at once when a token names a key id the set does not hold (the issuer
rotated its keys; at most every MIN_REFETCH_S). The signature, `iss`, `aud` (the issuer's
`audience`), `exp` and `nbf` (with `leeway_s`) are verified; any failure is 401.

The token names a person: the principal `principal_prefix` + its `principal_claim`, a user, and the
grants its groups (`roles_claim`) bring per Domain (`roles`), besides the grants an admin gave that
principal. Policies apply to it unchanged (lorebase_keeper.access.auth).
"""

from __future__ import annotations

import asyncio
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
    jwks_uri: str = ""
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
        if not keys.jwks_uri:
            found = await client.get(issuer.issuer.rstrip("/") + "/.well-known/openid-configuration")
            found.raise_for_status()
            discovery = found.json()
            if discovery.get("issuer") != issuer.issuer or not discovery.get("jwks_uri"):
                raise unknown_credential("the identity provider's discovery document names another issuer")
            keys.jwks_uri = str(discovery["jwks_uri"])
        answer = await client.get(keys.jwks_uri)
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

    async def verify(self, token: str) -> Identity:
        """The identity a token of a configured issuer names; 401 for anything else."""
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
        try:
            claims = jwt.decode(
                token,
                key=key,
                algorithms=issuer.algorithms,
                audience=issuer.audience,
                issuer=issuer.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise unknown_credential("the token has expired; sign in again") from exc
        except jwt.InvalidAudienceError as exc:
            raise unknown_credential(
                f"the token is not for this API (its audience is not {issuer.audience})"
            ) from exc
        except jwt.PyJWTError as exc:
            raise unknown_credential(f"the token does not verify ({exc})") from exc
        return _identity(issuer, claims)


def _identity(issuer: OidcIssuer, claims: dict[str, Any]) -> Identity:
    subject = str(claims.get(issuer.principal_claim) or "")
    local = _NOT_NAME.sub("_", subject.lower()).strip("_")
    if not local:
        raise unknown_credential(f"the token has no {issuer.principal_claim} to name a principal by")
    principal_id = (issuer.principal_prefix + local)[:128]
    groups = claims.get(issuer.roles_claim) or []
    if isinstance(groups, str):
        groups = groups.split()
    grants = tuple(g for group in groups if isinstance(group, str) for g in issuer.roles.get(group, ()))
    name = str(claims.get(issuer.name_claim) or subject)[:200]
    return Identity(principal_id, name, grants, float(claims["exp"]))


__all__ = ["Identity", "OidcVerifier", "looks_like_jwt"]
