"""Handlers of administration: principals and their keys, Domains, grants (admin/)."""

from __future__ import annotations

from typing import Any

from lorebase.contract.admin import (
    CreateDomain,
    CreateGrant,
    CreateKey,
    CreatePrincipal,
    DeleteGrant,
    GetDomain,
    ListDomains,
    RevokeKey,
)
from lorebase.contract.answers.admin import DomainEntry, DomainList, DomainView
from lorebase_keeper import admin
from lorebase_keeper.api.call import Call, DomainCall, handler


@handler("create_principal")
async def create_principal(call: Call[CreatePrincipal]) -> dict[str, Any]:
    return await admin.create_principal(call.rt, call.caller, call.request.body)


@handler("create_key")
async def create_key(call: Call[CreateKey]) -> dict[str, Any]:
    return await admin.create_key(call.rt, call.caller, call.request.principal)


@handler("revoke_key")
async def revoke_key(call: Call[RevokeKey]) -> dict[str, Any]:
    return await admin.revoke_key(call.rt, call.caller, call.request.principal, call.request.key_id)


@handler("create_domain")
async def create_domain(call: Call[CreateDomain]) -> dict[str, Any]:
    return await admin.create_domain(call.rt, call.caller, call.request.body)


@handler("list_domains")
async def list_domains(call: Call[ListDomains]) -> DomainList:
    """The Domains the caller holds a grant in (every one for the admin principal)."""
    rt, caller = call.rt, call.caller
    rows = await rt.db.read("list_domains", lambda txn: txn.list_domains())
    visible = []
    for row in rows:
        if caller.is_admin or (await rt.auth.access(caller, row.id)).grants:
            visible.append(DomainEntry(name=row.name, default_branch=row.default_branch))
    return DomainList(domains=visible)


@handler("get_domain")
async def get_domain(call: DomainCall[GetDomain]) -> DomainView:
    domain = call.domain
    return DomainView(
        name=domain.name, default_branch=domain.default_branch, description=domain.schema.description
    )


@handler("create_grant")
async def create_grant(call: DomainCall[CreateGrant]) -> dict[str, Any]:
    return await admin.create_grant(call.rt, call.access, call.domain, call.request.body)


@handler("delete_grant")
async def delete_grant(call: DomainCall[DeleteGrant]) -> dict[str, Any]:
    return await admin.delete_grant(call.rt, call.access, call.domain, call.request.grant_id)
