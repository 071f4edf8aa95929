"""The REST client's reads of the graph: Records, Links, history, lineage, explain, diff, data
health, and the POSTed reads (context packs, graph walks, search, resolve, query).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorebase.clients.rest.connection import RestConnection
from lorebase.clients.rest.routes import DOMAIN, RECORD, route


class ReadCalls(RestConnection):
    """Reads (docs/rest.md "Reads" and the sections after it)."""

    # -- reads -----------------------------------------------------------------------------------

    @route("GET", RECORD)
    async def get_record(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        links: bool = False,
        lineage: bool = False,
    ) -> Any:
        query = {"branch": branch, "at": at, "links": links, "lineage": lineage}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_record", path=path, query=query)).body

    @route("GET", RECORD + "/links/{relation}")
    async def get_links(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        relation: str,
        branch: str = "",
        at: str = "",
        limit: int = 0,
        cursor: str = "",
    ) -> Any:
        query = {"branch": branch, "at": at, "limit": limit, "cursor": cursor}
        path = {"domain": domain, "kind": kind, "key": key, "relation": relation}
        return (await self._send("get_links", path=path, query=query)).body

    @route("GET", RECORD + "/history")
    async def get_history(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        values: bool = False,
        limit: int = 0,
        cursor: str = "",
    ) -> Any:
        query = {"branch": branch, "at": at, "values": values, "limit": limit, "cursor": cursor}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_history", path=path, query=query)).body

    @route("GET", RECORD + "/lineage")
    async def get_lineage(self, *, domain: str, kind: str, key: str, branch: str = "", at: str = "") -> Any:
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_lineage", path=path, query={"branch": branch, "at": at})).body

    @route("GET", RECORD + "/explain")
    async def explain(
        self, *, domain: str, kind: str, key: str, branch: str = "", at: str = "", markdown: bool = False
    ) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("explain", path=path, query=query)).body

    @route("GET", DOMAIN + "/diff")
    async def diff(self, *, domain: str, from_revision: str, to_revision: str, branch: str = "") -> Any:
        query = {"from": from_revision, "to": to_revision, "branch": branch}
        return (await self._send("diff", path={"domain": domain}, query=query)).body

    @route("GET", DOMAIN + "/health")
    async def get_health(self, *, domain: str, branch: str = "", at: str = "", markdown: bool = False) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        return (await self._send("get_health", path={"domain": domain}, query=query)).body

    @route("GET", DOMAIN + "/kinds/{kind}/health")
    async def get_kind_health(
        self, *, domain: str, kind: str, branch: str = "", at: str = "", markdown: bool = False
    ) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        reply = await self._send("get_kind_health", path={"domain": domain, "kind": kind}, query=query)
        return reply.body

    async def _post_read(self, name: str, domain: str, body: Mapping[str, Any]) -> Any:
        return (await self._send(name, path={"domain": domain}, body=dict(body))).body

    @route("POST", DOMAIN + "/context")
    async def context(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        """The pack: a JSON object, or the Markdown text with `"format": "markdown"`."""
        return await self._post_read("context", domain, body)

    @route("POST", DOMAIN + "/neighborhood")
    async def neighborhood(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("neighborhood", domain, body)

    @route("POST", DOMAIN + "/traverse")
    async def traverse(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("traverse", domain, body)

    @route("POST", DOMAIN + "/search")
    async def search(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("search", domain, body)

    @route("POST", DOMAIN + "/resolve")
    async def resolve(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("resolve", domain, body)

    @route("POST", DOMAIN + "/query")
    async def query(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("query", domain, body)


__all__ = ["ReadCalls"]
