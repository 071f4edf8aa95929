"""`RestClient`: the REST client of the gateway, one generic call driven by the declarations.

`await client.call("get_record", domain="supply", kind="Supplier", key="S-1001", links=True)`
finds the endpoint in `lorebase.contract.BY_NAME`, builds its path, query, headers and body from
the keywords (lorebase.clients.rest.request says how, and what is checked before sending), sends
it and answers a `Reply`, or raises the `Problem` of the answer.

Every endpoint also has a method of its name, made here from its declaration, which answers the
`Reply`'s body: `await client.get_record(domain=..., kind=..., key=...)`. Its signature lists the
endpoint's keywords (`help(RestClient.get_record)`). Two are written out because they do more than
one call: `health` (a 503 is an answer, not a failure) and `events` (a stream of frames).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from lorebase.clients.rest.connection import Reply, RestConnection, problem_from
from lorebase.clients.rest.request import build, signature
from lorebase.contract import BY_NAME, ENDPOINTS, Endpoint
from lorebase.problems import Problem


def _endpoint(name: str) -> Endpoint:
    try:
        return BY_NAME[name]
    except KeyError:
        raise TypeError(f"no endpoint {name!r}; lorebase.contract.BY_NAME lists them") from None


class RestClient(RestConnection):
    """Async client of the gateway's REST API. Keyword-only arguments; `Problem` on failure."""

    async def call(self, name: str, /, **arguments: Any) -> Reply:
        """Call the endpoint `name` (its operationId) with its parameters and body members."""
        return await self.send(build(_endpoint(name), arguments))

    async def health(self) -> Any:
        """`GET /health`: `{"status": "ok"|"degraded", ...}`, or `{"status": "unavailable", ...}`."""
        try:  # asked once: a 503 here is the answer (which service is down), not a refusal to wait out
            return (await self.send(build(_endpoint("health"), {}), retries=0)).body
        except Problem as problem:
            if problem.status == 503 and problem.code != "unreachable":
                return {"status": "unavailable", **problem.extra}
            raise

    async def events(self, **arguments: Any) -> AsyncIterator[dict[str, Any]]:
        """The event stream: one dict per frame, `{"id", "event", "data"}` with `data` parsed."""
        request = build(BY_NAME["events"], arguments)
        headers = {**request.headers, "Accept": "text/event-stream"}
        timeout = httpx.Timeout(self.settings.timeout_s, read=None)
        try:
            async with self._http.stream(
                "GET", request.path, params=request.query, headers=headers, timeout=timeout
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

    if TYPE_CHECKING:
        # The methods made from the declarations (below), for the type checker.
        def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]: ...


def _method(endpoint: Endpoint) -> Callable[..., Awaitable[Any]]:
    """The method of an endpoint: its call, answering the body."""

    async def method(self: RestClient, **arguments: Any) -> Any:
        return (await self.call(endpoint.name, **arguments)).body

    method.__name__ = endpoint.name
    method.__qualname__ = f"RestClient.{endpoint.name}"
    method.__doc__ = f"{endpoint.summary}: {endpoint.method} {endpoint.openapi_path}; answers the body."
    method.__signature__ = signature(endpoint)  # type: ignore[attr-defined]
    return method


for _declared in ENDPOINTS:
    if _declared.name in ("health", "events"):  # written out above
        continue
    if hasattr(RestClient, _declared.name):
        raise RuntimeError(f"the endpoint {_declared.name!r} would hide RestClient.{_declared.name}")
    setattr(RestClient, _declared.name, _method(_declared))


__all__ = ["RestClient"]
