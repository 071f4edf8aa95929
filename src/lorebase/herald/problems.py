"""Herald's problems speak of tools: a REST route that a problem's detail names ("GET /schema lists
them") becomes the tool that calls that endpoint ("the tool lorebase_schema lists them"), since an
agent calls tools, not routes. Which tool calls which endpoint is read from the tools' own code,
the way the parity test (tests/unit/test_parity.py) reads it."""

from __future__ import annotations

import inspect
import re

from lorebase.contract import ENDPOINTS
from lorebase.herald.tools import TOOLS

# `client.get_record(` or `client.call("get_record"` in a tool's code: the endpoints it calls.
_CALL = re.compile(r"\bclient\.(?:call\(\s*\"(\w+)\"|(\w+)\()")
# A REST route named in a problem's text: "GET /schema", "POST /context".
_ROUTE = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE) (/[\w/{}.-]*\w)")


def _tool_of_endpoint() -> dict[str, str]:
    found: dict[str, str] = {}
    for herald_tool in TOOLS:
        for called, method in _CALL.findall(inspect.getsource(herald_tool.run)):
            found.setdefault(called or method, herald_tool.name)
    return found


TOOL_OF_ENDPOINT = _tool_of_endpoint()


def for_agents(text: str) -> str:
    """`text` (a problem's detail) with each REST route it names that a tool calls replaced by that
    tool ("GET /schema lists them" → "lorebase_schema lists them"): an agent calls tools, not routes."""

    def tool_for(match: re.Match[str]) -> str:
        method, route = match.groups()
        for endpoint in ENDPOINTS:
            if endpoint.method == method and endpoint.openapi_path.endswith(route):
                name = TOOL_OF_ENDPOINT.get(endpoint.name)
                if name is not None:
                    return f"the tool {name}"
        return match.group(0)

    return _ROUTE.sub(tool_for, text)


__all__ = ["TOOL_OF_ENDPOINT", "for_agents"]
