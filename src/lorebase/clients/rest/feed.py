"""The REST client's calls that follow changes: the change feed, the event stream, and webhooks
(docs/feed.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson

from lorebase.clients.rest.connection import RestConnection, problem_from, query_params
from lorebase.clients.rest.routes import DOMAIN, route
from lorebase.problems import Problem


class FeedCalls(RestConnection):
    """Following changes (docs/rest.md "Following changes")."""

    # -- the change feed -------------------------------------------------------------------------

    @route("GET", DOMAIN + "/branches/{branch}/changes")
    async def changes(
        self, *, domain: str, branch: str, since: str = "", kinds: str = "", limit: int = 0
    ) -> Any:
        query = {"since": since, "kinds": kinds, "limit": limit}
        return (await self._send("changes", path={"domain": domain, "branch": branch}, query=query)).body

    @route("GET", DOMAIN + "/branches/{branch}/events")
    async def events(
        self, *, domain: str, branch: str, kinds: str = "", last_event_id: str = ""
    ) -> AsyncIterator[dict[str, Any]]:
        """The event stream: one dict per frame, `{"id", "event", "data"}` with `data` parsed."""
        url = self.path("events", domain=domain, branch=branch)
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        timeout = httpx.Timeout(self.settings.timeout_s, read=None)
        try:
            async with self._http.stream(
                "GET", url, params=query_params({"kinds": kinds}), headers=headers, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise problem_from(response)
                frame: dict[str, Any] = {}
                async for line in response.aiter_lines():
                    if line == "":
                        if "data" in frame:
                            frame["data"] = orjson.loads(frame["data"])
                            yield frame
                        frame = {}
                    elif line.startswith(":"):
                        continue
                    else:
                        name, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if name == "data" and "data" in frame:
                            frame["data"] += "\n" + value
                        elif name in ("id", "event", "data"):
                            frame[name] = value
        except httpx.HTTPError as exc:
            raise Problem(
                503, "unreachable", f"the event stream from {self.settings.url} ended ({exc})"
            ) from exc

    # -- webhooks --------------------------------------------------------------------------------

    @route("POST", DOMAIN + "/webhooks")
    async def create_webhook(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return (await self._send("create_webhook", path={"domain": domain}, body=dict(body))).body

    @route("GET", DOMAIN + "/webhooks")
    async def list_webhooks(self, *, domain: str) -> Any:
        return (await self._send("list_webhooks", path={"domain": domain})).body

    @route("PATCH", DOMAIN + "/webhooks/{id}")
    async def update_webhook(self, *, domain: str, id: str, body: Mapping[str, Any]) -> Any:
        return (await self._send("update_webhook", path={"domain": domain, "id": id}, body=dict(body))).body

    @route("DELETE", DOMAIN + "/webhooks/{id}")
    async def delete_webhook(self, *, domain: str, id: str) -> Any:
        return (await self._send("delete_webhook", path={"domain": domain, "id": id})).body


__all__ = ["FeedCalls"]
