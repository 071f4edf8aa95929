"""The REST client's schema, branch and Proposal calls (Conflicts and their resolution included)."""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest.connection import RestConnection, request_body
from lorebase.clients.rest.routes import DOMAIN, PROPOSAL, route


class BranchCalls(RestConnection):
    """Schema and branches, Proposals (docs/rest.md)."""

    # -- schema and branches ---------------------------------------------------------------------

    @route("GET", DOMAIN + "/schema")
    async def get_schema(self, *, domain: str, branch: str = "") -> Any:
        return (await self._send("get_schema", path={"domain": domain}, query={"branch": branch})).body

    @route("POST", DOMAIN + "/branches")
    async def create_branch(
        self,
        *,
        domain: str,
        name: str,
        from_branch: str = "",
        mode: str = "",
        protected: bool | None = None,
        required_approvals: int | None = None,
    ) -> Any:
        body = request_body(
            {
                "name": name,
                "from": from_branch,
                "mode": mode,
                "protected": protected,
                "required_approvals": required_approvals,
            }
        )
        return (await self._send("create_branch", path={"domain": domain}, body=body)).body

    @route("GET", DOMAIN + "/branches")
    async def list_branches(self, *, domain: str) -> Any:
        return (await self._send("list_branches", path={"domain": domain})).body

    @route("GET", DOMAIN + "/branches/{branch}")
    async def get_branch(self, *, domain: str, branch: str) -> Any:
        return (await self._send("get_branch", path={"domain": domain, "branch": branch})).body

    @route("PATCH", DOMAIN + "/branches/{branch}")
    async def update_branch(
        self,
        *,
        domain: str,
        branch: str,
        protected: bool | None = None,
        required_approvals: int | None = None,
    ) -> Any:
        body = request_body({"protected": protected, "required_approvals": required_approvals})
        reply = await self._send("update_branch", path={"domain": domain, "branch": branch}, body=body)
        return reply.body

    @route("DELETE", DOMAIN + "/branches/{branch}")
    async def delete_branch(self, *, domain: str, branch: str) -> Any:
        return (await self._send("delete_branch", path={"domain": domain, "branch": branch})).body

    # -- proposals -------------------------------------------------------------------------------

    @route("POST", DOMAIN + "/proposals")
    async def create_proposal(
        self, *, domain: str, source: str, target: str = "", title: str = "", description: str = ""
    ) -> Any:
        body = request_body({"source": source, "target": target, "title": title, "description": description})
        return (await self._send("create_proposal", path={"domain": domain}, body=body)).body

    @route("GET", DOMAIN + "/proposals")
    async def list_proposals(
        self, *, domain: str, status: str = "", assigned: str = "", limit: int = 0, cursor: str = ""
    ) -> Any:
        query = {"status": status, "assigned": assigned, "limit": limit, "cursor": cursor}
        return (await self._send("list_proposals", path={"domain": domain}, query=query)).body

    @route("GET", PROPOSAL)
    async def get_proposal(self, *, domain: str, proposal: str) -> Any:
        return (await self._send("get_proposal", path={"domain": domain, "proposal": proposal})).body

    @route("POST", PROPOSAL + "/reviews")
    async def review_proposal(self, *, domain: str, proposal: str, decision: str, comment: str = "") -> Any:
        body = request_body({"decision": decision, "comment": comment})
        reply = await self._send("review_proposal", path={"domain": domain, "proposal": proposal}, body=body)
        return reply.body

    @route("POST", PROPOSAL + "/merge")
    async def merge_proposal(self, *, domain: str, proposal: str) -> Any:
        reply = await self._send("merge_proposal", path={"domain": domain, "proposal": proposal}, body={})
        return reply.body

    @route("POST", PROPOSAL + "/close")
    async def close_proposal(self, *, domain: str, proposal: str) -> Any:
        reply = await self._send("close_proposal", path={"domain": domain, "proposal": proposal}, body={})
        return reply.body

    @route("GET", PROPOSAL + "/conflicts")
    async def list_conflicts(self, *, domain: str, proposal: str) -> Any:
        return (await self._send("list_conflicts", path={"domain": domain, "proposal": proposal})).body

    @route("POST", PROPOSAL + "/conflicts/{conflict}/resolve")
    async def resolve_conflict(
        self, *, domain: str, proposal: str, conflict: str, resolution: str, value: Any = None
    ) -> Any:
        body: dict[str, Any] = {"resolution": resolution}
        if resolution == "value":
            body["value"] = value
        path = {"domain": domain, "proposal": proposal, "conflict": conflict}
        return (await self._send("resolve_conflict", path=path, body=body)).body


__all__ = ["BranchCalls"]
