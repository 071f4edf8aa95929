"""Claims to principals and grants (lorebase.oidc.identity), per issuer and per tenant: a token's
groups bring the grants its issuer maps them to; a multi-tenant issuer trusts only the tenants it
lists, names their people as principals of their own, and gives each only its tenant's grants;
settings that would mix tenants do not load."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from lorebase.config import SettingsError, load_settings
from lorebase.oidc import identity
from lorebase.problems import Problem
from lorebase.settings_model import OidcGrant, OidcIssuer, OidcTenant

ACME, GLOBEX = "7f0c-acme", "a1b2-globex"
TENANTS = OidcIssuer(
    issuer="https://login.example.com",
    audience="lorebase",
    tenant_claim="tid",
    tenants={
        ACME: OidcTenant(
            name="acme",
            grants=[OidcGrant(domain="supply", role="viewer")],
            roles={"buyers": [OidcGrant(domain="supply", role="editor", branches=["agent/*"])]},
        ),
        GLOBEX: OidcTenant(name="globex", roles={"buyers": [OidcGrant(domain="ledger", role="viewer")]}),
    },
)


def _claims(**claims: Any) -> dict[str, Any]:
    return {"sub": "Alice", "exp": time.time() + 60, **claims}


def test_groups_bring_the_grants_their_issuer_maps() -> None:
    issuer = OidcIssuer(
        issuer="https://idp.example.com",
        audience="lorebase",
        roles={"supply-readers": [OidcGrant(domain="supply", role="viewer")]},
    )
    found = identity(issuer, _claims(groups=["supply-readers", "unmapped"]))
    assert found.principal_id == "usr_alice"
    assert found.grants == (OidcGrant(domain="supply", role="viewer"),)
    assert identity(issuer, _claims(groups="supply-readers")).grants == found.grants  # space-separated
    assert identity(issuer, _claims()).grants == ()


def test_a_tenant_s_people_get_its_grants_alone() -> None:
    acme = identity(TENANTS, _claims(tid=ACME, groups=["buyers"]))
    assert acme.principal_id == "usr_acme_alice"
    assert [(g.domain, g.role) for g in acme.grants] == [("supply", "viewer"), ("supply", "editor")]
    globex = identity(TENANTS, _claims(tid=GLOBEX, groups=["buyers"]))
    # The same person's claim in another tenant: another principal, with that tenant's grants only.
    assert globex.principal_id == "usr_globex_alice"
    assert [(g.domain, g.role) for g in globex.grants] == [("ledger", "viewer")]
    assert identity(TENANTS, _claims(tid=GLOBEX)).grants == ()


@pytest.mark.parametrize("tenant", [None, "", "someone-else"])
def test_a_token_of_a_tenant_not_listed_is_refused(tenant: str | None) -> None:
    claims = _claims(groups=["buyers"]) if tenant is None else _claims(tid=tenant, groups=["buyers"])
    with pytest.raises(Problem) as refused:
        identity(TENANTS, claims)
    assert refused.value.status == 401
    assert "tenant" in refused.value.detail and "keeper.auth.oidc.issuers[].tenants" in refused.value.detail


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"tenant_claim": "tid", "roles": {"g": [{"domain": "d", "role": "viewer"}]}}, "roles go under"),
        ({"tenants": {"x": {"name": "x"}}}, "tenants need tenant_claim"),
        ({"tenant_claim": "tid", "tenants": {"x": {"name": "same"}, "y": {"name": "same"}}}, "share a name"),
        ({"tenant_claim": "tid", "tenants": {"x": {"name": "Not A Name"}}}, "name"),
        ({"web": {"id": "corp", "label": "Corp"}}, "missing"),  # its client_id
    ],
)
def test_settings_that_would_mix_tenants_do_not_load(entry: dict[str, Any], says: str) -> None:
    issuers = [{"issuer": "https://login.example.com", "audience": "lorebase", **entry}]
    with pytest.raises(SettingsError) as refused:
        load_settings({"LOREBASE_KEEPER__AUTH__OIDC__ISSUERS": json.dumps(issuers)})
    assert says in str(refused.value)


def test_two_web_clients_need_two_ids() -> None:
    web = {"id": "corp", "label": "Corp", "client_id": "c"}
    issuers = [
        {"issuer": "https://a.example.com", "audience": "lorebase", "web": web},
        {"issuer": "https://b.example.com", "audience": "lorebase", "web": web},
    ]
    with pytest.raises(SettingsError) as refused:
        load_settings({"LOREBASE_KEEPER__AUTH__OIDC__ISSUERS": json.dumps(issuers)})
    assert "share an id" in str(refused.value)
