"""Keeper's authentication and authorization settings (keeper.auth): grants' cache, and the
OpenID Connect issuers whose tokens authenticate people, with their tenants, grants and web
clients."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from lorebase.settings_model.section import (
    AtLeastZero,
    GraceSeconds,
    Role,
    Seconds,
    Section,
)


class Authz(Section, frozen=True):
    invisible_kinds: bool
    grants_cache_ttl_s: GraceSeconds


class OidcGrant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A grant a group of an identity provider brings (auth.oidc.issuers[].roles)."""

    domain: str
    role: Role
    branches: list[str] = msgspec.field(default_factory=lambda: ["*"])
    kinds: list[str] | None = None


OidcName = Annotated[str, Meta(pattern=r"\A[a-z0-9][a-z0-9_]{0,31}\Z")]
ProviderId = Annotated[str, Meta(pattern=r"\A[a-z0-9][a-z0-9-]{0,31}\Z")]


class OidcTenant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A tenant (organisation) of a multi-tenant issuer (auth.oidc.issuers[].tenants): its people
    are principals of their own (principal_prefix + name + "_" + the person's claim) and get only
    the grants named here."""

    name: OidcName  # in the principal ids of its people: usr_<name>_<sub>
    grants: list[OidcGrant] = msgspec.field(default_factory=list)  # every person of the tenant
    roles: dict[str, list[OidcGrant]] = msgspec.field(default_factory=dict)  # group -> grants


class OidcWebClient(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The web app's client at an issuer (auth.oidc.issuers[].web): "Sign in with <label>" runs the
    authorization code flow with PKCE through the gateway (docs/security.md)."""

    id: ProviderId  # in the sign-in URL: /api/v1/web/oidc/<id>/start
    label: str  # the button's text: "Sign in with <label>"
    client_id: str
    client_secret: str = ""  # empty: a public client (PKCE alone); else client_secret_post
    scopes: list[str] = msgspec.field(default_factory=lambda: ["openid", "profile"])


class OidcIssuer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An OpenID Connect identity provider whose access tokens (JWT) authenticate people and MCP
    hosts (docs/security.md, "Sign-in through an identity provider")."""

    issuer: str  # exactly the `iss` of its tokens; discovery at <issuer>/.well-known/openid-configuration
    audience: str  # the `aud` its tokens must name (Lorebase's API)
    principal_claim: str = "sub"  # the claim that names the person
    principal_prefix: str = "usr_"  # principal id = prefix + that claim (lower case, [a-z0-9_])
    name_claim: str = "name"
    roles_claim: str = "groups"  # the claim listing the person's groups
    roles: dict[str, list[OidcGrant]] = msgspec.field(default_factory=dict)  # group -> grants
    # A multi-tenant issuer: the claim naming the person's tenant (Entra ID `tid`, Okta/Auth0
    # `org_id`...), and the tenants trusted, by that claim's value. A token of another tenant, or
    # with no such claim, is refused; a tenant's people get its grants and roles only.
    tenant_claim: str = ""
    tenants: dict[str, OidcTenant] = msgspec.field(default_factory=dict)
    algorithms: list[str] = msgspec.field(default_factory=lambda: ["RS256", "ES256"])
    web: OidcWebClient | None = None  # the web app's "Sign in with <label>" (None: not offered)

    def __post_init__(self) -> None:
        if self.tenant_claim and self.roles:
            raise ValueError("with tenant_claim, roles go under each tenant (tenants.<value>.roles)")
        if self.tenants and not self.tenant_claim:
            raise ValueError("tenants need tenant_claim: the claim that names a token's tenant")
        named = [tenant.name for tenant in self.tenants.values()]
        if len(set(named)) != len(named):
            raise ValueError("two tenants share a name: their people would be the same principals")


class Oidc(Section, frozen=True):
    issuers: list[OidcIssuer]
    jwks_refresh_s: Seconds
    leeway_s: AtLeastZero

    def __post_init__(self) -> None:
        ids = [issuer.web.id for issuer in self.issuers if issuer.web is not None]
        if len(set(ids)) != len(ids):
            raise ValueError("two issuers' web clients share an id")


class Auth(Section, frozen=True):
    authz: Authz
    oidc: Oidc
