"""Herald through the `mcp` SDK's own client against a running stack: over stdio (the client spawns
`lorebase herald` with the agent's LOREBASE_KEY) and over streamable HTTP (each request's
Authorization header is forwarded; Herald's own environment key is never used)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from lorebase.embedded import free_port
from tests.e2e.running import Running

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

SEED_TOOLS = {
    "lorebase_context",
    "lorebase_search",
    "lorebase_schema",
    "lorebase_resolve",
    "lorebase_query",
    "lorebase_explain",
    "lorebase_history",
    "lorebase_lineage",
    "lorebase_health",
    "lorebase_execute",
    "lorebase_changes",
}


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _json(result: Any) -> Any:
    assert not result.is_error, _text(result)
    return json.loads(_text(result))


async def test_tools_over_stdio_as_the_agent(running: Running) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebase", "herald"], env=running.env(running.agent_key)
    )
    async with Client(params) as herald:
        listed = await herald.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert SEED_TOOLS <= set(tools)
        for tool in tools.values():
            assert tool.input_schema["type"] == "object" and tool.description
        assert tools["lorebase_execute"].input_schema["properties"]["dry_run"]["default"] is True
        execute = tools["lorebase_execute"].annotations
        assert execute is not None
        # Operations update and delete; a real execution carries an idempotency key (answered once).
        assert (execute.read_only_hint, execute.destructive_hint, execute.idempotent_hint) == (
            False,
            True,
            True,
        )
        # Accepting a reconciliation candidate deletes a Record; a decided one is refused (409).
        reconcile = tools["lorebase_reconcile"].annotations
        assert reconcile is not None
        assert (reconcile.read_only_hint, reconcile.destructive_hint, reconcile.idempotent_hint) == (
            False,
            True,
            True,
        )
        writes = {"lorebase_execute", "lorebase_reconcile"}
        reads = [t.annotations for name, t in tools.items() if name not in writes]
        assert all(
            a is not None and a.read_only_hint and not a.destructive_hint and a.idempotent_hint for a in reads
        )
        # An unknown tool is a protocol error (-32602), not a tool's answer.
        with pytest.raises(MCPError) as unknown:
            await herald.call_tool("lorebase_nope", {})
        assert unknown.value.code == -32602 and "lorebase_schema" in unknown.value.message

        pack = await herald.call_tool(
            "lorebase_context", {"refs": ["Supplier/S-1001"], "lens": "supplier_risk"}
        )
        assert not pack.is_error and _text(pack).startswith("# Context: supply/main")
        revision = _json(
            await herald.call_tool("lorebase_context", {"refs": ["Supplier/S-1001"], "format": "json"})
        )["revision"]
        found = _json(await herald.call_tool("lorebase_search", {"text": "Poznan", "traits": ["Located"]}))
        assert [r["ref"] for r in found["results"]] == ["Supplier/S-1001"]
        schema = _json(await herald.call_tool("lorebase_schema", {}))
        assert "supplier_risk" in [lens["name"] for lens in schema["lenses"]]
        resolved = _json(await herald.call_tool("lorebase_resolve", {"text": "suppliers in Poznan"}))
        predicate = next(c["predicate"] for c in resolved["candidates"] if c.get("attribute") == "city")
        rows = _json(await herald.call_tool("lorebase_query", {"kind": "Supplier", "where": predicate}))
        assert [r["key"] for r in rows["records"]] == ["S-1001"]
        explained = await herald.call_tool("lorebase_explain", {"kind": "Supplier", "key": "S-1001"})
        assert _text(explained).startswith("# Explain: Supplier/S-1001")
        history = _json(await herald.call_tool("lorebase_history", {"kind": "Supplier", "key": "S-1001"}))
        assert history["changes"][-1]["change"] == "created"
        lineage = _json(await herald.call_tool("lorebase_lineage", {"kind": "Supplier", "key": "S-1001"}))
        assert "risk_score" in lineage["attributes"]
        health = await herald.call_tool("lorebase_health", {"kind": "Supplier"})
        assert _text(health).startswith("# Health of supply")
        changes = _json(await herald.call_tool("lorebase_changes", {"limit": 1}))
        assert changes["events"]

        # Bad input is a tool error naming the problem, never a crash of the server.
        bad = await herald.call_tool("lorebase_record", {"kind": "Supplier"})
        assert bad.is_error and "'key' is a required property" in _text(bad)
        missing = await herald.call_tool("lorebase_record", {"kind": "Supplier", "key": "S-9999"})
        assert missing.is_error and "Not found" in _text(missing)
        # Problems name the tool to call, not a REST route.
        unknown_kind = await herald.call_tool("lorebase_record", {"kind": "Nope", "key": "x"})
        assert unknown_kind.is_error and "the tool lorebase_schema" in _text(unknown_kind).split("\n")[0]
        assert "GET /schema" not in _text(unknown_kind).split("\n")[0]

        # Dry run by default: nothing is written.
        flag = {"supplier": "S-1025", "severity": "high", "reason": "Herald test"}
        dry = _json(
            await herald.call_tool(
                "lorebase_execute",
                {"operation": "flag_supplier_risk", "parameters": flag, "task": "herald-e2e"},
            )
        )
        assert dry["status"] == "dry_run" and dry["valid"] is True
        write = {
            "operation": "flag_supplier_risk",
            "parameters": flag,
            "dry_run": False,
            "task": "herald-e2e",
            "intent": "Flag S-1025 from the Herald test",
            "expected_head": revision,
        }
        proposed = _json(await herald.call_tool("lorebase_execute", write))
        assert proposed["status"] == "proposed" and proposed["proposal"]["created"] is True
        again = _json(await herald.call_tool("lorebase_execute", write))  # the derived idempotency key
        assert again["replayed"] is True and again["proposal"]["id"] == proposed["proposal"]["id"]
        followed = _json(
            await herald.call_tool("lorebase_proposals", {"proposal": proposed["proposal"]["id"]})
        )
        assert followed["status"] == "open" and followed["task"] == "herald-e2e"


@pytest.fixture
def herald_http(running: Running) -> Iterator[str]:
    port = free_port()
    env = running.env(running.admin_key)  # Herald's own environment holds the admin key: never used over HTTP
    with subprocess.Popen(
        [sys.executable, "-m", "lorebase", "herald", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as process:
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert process.poll() is None and time.monotonic() < deadline, "herald did not listen"
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(10)


async def _call(url: str, key: str | None, tool: str, arguments: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as herald:
            return await herald.call_tool(tool, arguments)


async def test_http_forwards_the_callers_credential_and_never_widens(
    running: Running, herald_http: str
) -> None:
    record = {"kind": "Supplier", "key": "S-1001"}
    # The MCP authorization spec: no credential is a 401 naming the Protected Resource Metadata.
    async with httpx2.AsyncClient() as http:
        anonymous = await http.post(herald_http, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert anonymous.status_code == 401
        challenge = anonymous.headers["www-authenticate"]
        assert challenge.startswith("Bearer resource_metadata=")
        metadata_url = challenge.split('"')[1]
        assert metadata_url == herald_http.removesuffix("/mcp") + "/.well-known/oauth-protected-resource/mcp"
        metadata = (await http.get(metadata_url)).json()
        assert metadata["resource"] == herald_http and metadata["bearer_methods_supported"] == ["header"]
        assert (
            await http.get(herald_http.removesuffix("/mcp") + "/.well-known/oauth-protected-resource")
        ).json() == metadata

    admin = await _call(herald_http, running.admin_key, "lorebase_record", record)
    assert _json(admin)["values"]["city"] == "Poznan"

    narrowed = await _call(herald_http, running.part_viewer_key, "lorebase_record", record)
    assert narrowed.is_error and "Not found" in _text(narrowed)
    searched = _json(await _call(herald_http, running.part_viewer_key, "lorebase_search", {"text": "Poznan"}))
    assert searched["results"] == [] and searched["kinds"] == ["Part"]

    revoked = await _call(herald_http, "lbk_not-a-key", "lorebase_schema", {})
    assert revoked.is_error and "Unauthenticated" in _text(revoked)
