"""The REST client's administration calls: health, principals and their keys, sessions, Domains,
grants, and the governance of Scribe's suggestions.
"""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest.connection import RestConnection, request_body
from lorebase.clients.rest.routes import API, DOMAIN, route
from lorebase.problems import Problem


class AdminCalls(RestConnection):
    """Health and administration (docs/rest.md "Administration"), and governance."""

    # -- health and administration ---------------------------------------------------------------

    @route("GET", "/health")
    async def health(self) -> Any:
        try:
            return (await self._send("health")).body
        except Problem as problem:
            if problem.status == 503 and problem.code != "unreachable":
                return {"status": "unavailable", **problem.extra}
            raise

    @route("POST", API + "/principals")
    async def create_principal(self, *, id: str, type: str, name: str = "", tenant: str = "") -> Any:
        body = request_body({"id": id, "type": type, "name": name, "tenant": tenant})
        return (await self._send("create_principal", body=body)).body

    @route("POST", API + "/principals/{principal}/keys")
    async def create_key(self, *, principal: str) -> Any:
        return (await self._send("create_key", path={"principal": principal})).body

    @route("DELETE", API + "/principals/{principal}/keys/{key_id}")
    async def revoke_key(self, *, principal: str, key_id: str) -> Any:
        return (await self._send("revoke_key", path={"principal": principal, "key_id": key_id})).body

    @route("POST", API + "/sessions/{session}/notes")
    async def add_session_note(self, *, session: str, text: str) -> Any:
        return (await self._send("add_session_note", path={"session": session}, body={"text": text})).body

    @route("GET", API + "/sessions/{session}")
    async def get_session(self, *, session: str) -> Any:
        return (await self._send("get_session", path={"session": session})).body

    @route("GET", API + "/domains")
    async def list_domains(self) -> Any:
        return (await self._send("list_domains")).body

    @route("POST", API + "/domains")
    async def create_domain(
        self, *, name: str, schema: Any, settings: Any = None, default_branch: str = ""
    ) -> Any:
        body = request_body(
            {"name": name, "schema": schema, "settings": settings, "default_branch": default_branch}
        )
        return (await self._send("create_domain", body=body)).body

    @route("GET", DOMAIN)
    async def get_domain(self, *, domain: str) -> Any:
        return (await self._send("get_domain", path={"domain": domain})).body

    @route("POST", DOMAIN + "/grants")
    async def create_grant(
        self, *, domain: str, principal: str, role: str, branches: list[str] | None = None, kinds: Any = None
    ) -> Any:
        body = request_body({"principal": principal, "role": role, "branches": branches, "kinds": kinds})
        return (await self._send("create_grant", path={"domain": domain}, body=body)).body

    @route("DELETE", DOMAIN + "/grants/{grant_id}")
    async def delete_grant(self, *, domain: str, grant_id: str) -> Any:
        return (await self._send("delete_grant", path={"domain": domain, "grant_id": grant_id})).body

    # -- governance ------------------------------------------------------------------------------

    @route("GET", DOMAIN + "/suggestions")
    async def list_suggestions(self, *, domain: str, status: str = "") -> Any:
        reply = await self._send("list_suggestions", path={"domain": domain}, query={"status": status})
        return reply.body

    @route("POST", DOMAIN + "/suggestions/{id}/accept")
    async def accept_suggestion(self, *, domain: str, id: str) -> Any:
        return (await self._send("accept_suggestion", path={"domain": domain, "id": id}, body={})).body

    @route("POST", DOMAIN + "/suggestions/{id}/dismiss")
    async def dismiss_suggestion(self, *, domain: str, id: str) -> Any:
        return (await self._send("dismiss_suggestion", path={"domain": domain, "id": id}, body={})).body


__all__ = ["AdminCalls"]
