"""The REST client against a running stack: the generic call and the methods made from the
declarations read the answers the gateway gives, and the problems the client finds before sending
are the ones the gateway answers for the same request."""

from __future__ import annotations

import httpx
import pytest

from lorebase.clients.rest import RestClient, RestSettings, build
from lorebase.contract import BY_NAME
from lorebase.problems import Problem
from tests.e2e.running import Running

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

S1001 = {"domain": "supply", "kind": "Supplier", "key": "S-1001"}


def _client(running: Running) -> RestClient:
    return RestClient(RestSettings(url=running.url, key=running.admin_key))


async def test_reads_through_the_generic_call_and_the_methods(running: Running) -> None:
    async with _client(running) as client:
        reply = await client.call("get_record", **S1001, links=True)
        assert reply.status == 200 and reply.body["values"]["city"] == "Poznan"
        assert "links" in reply.body and len(reply.revision) == 64
        assert (await client.get_record(**S1001))["values"]["risk_score"] == "90"

        markdown = await client.explain(**S1001, format="markdown")
        assert isinstance(markdown, str) and "S-1001" in markdown
        history = await client.get_history(**S1001, values=True, limit=1)
        assert len(history["changes"]) == 1 and history["next_cursor"]

        assert (await client.health())["status"] == "ok"
        with pytest.raises(Problem) as missing:
            await client.get_record(domain="supply", kind="Supplier", key="S-0000")
        assert (missing.value.status, missing.value.code) == (404, "not-found")


async def test_writes_with_members_as_keywords_and_a_branch_with_slashes(running: Running) -> None:
    async with _client(running) as client:
        created = await client.create_branch(domain="supply", name="client/e2e/work", from_="main")
        assert created["name"] == "client/e2e/work" and created["from"] == "main"
        assert (await client.get_branch(domain="supply", branch="client/e2e/work"))[
            "name"
        ] == "client/e2e/work"
        dry = await client.execute_operation(
            domain="supply",
            operation="update_supplier",
            body={"parameters": {"key": "S-1001", "risk_score": 75}, "branch": "client/e2e/work"},
            dry_run=True,
        )
        assert dry["status"] == "dry_run" and dry["valid"] is True
        deleted = await client.delete_branch(domain="supply", branch="client/e2e/work")
        assert deleted["deleted"] is True


async def test_the_client_refuses_what_the_gateway_refuses(running: Running) -> None:
    """The same bad request, sent raw to the gateway and given to the client: the same problem."""
    cases = [
        ("create_branch", {"name": "w", "mode": "sideways"}),
        ("create_grant", {"principal": "agt_e2e", "role": ["admin"]}),
        ("query", {"kind": "Supplier", "limit": "ten", "colour": "red"}),
    ]
    headers = {"Authorization": f"Bearer {running.admin_key}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=running.url, trust_env=False) as http:
        for name, body in cases:
            endpoint = BY_NAME[name]
            path = endpoint.path.replace("{domain}", "supply")
            answer = await http.request(endpoint.method, path, json=body, headers=headers)
            with pytest.raises(Problem) as local:
                build(endpoint, {"domain": "supply", "body": body})
            served = answer.json()
            assert (local.value.status, local.value.code) == (answer.status_code, served["code"]), name
            assert local.value.extra["issues"] == served["issues"], name

        answer = await http.get("/api/v1/domains/supply/proposals", params={"limit": "1000"}, headers=headers)
        with pytest.raises(Problem) as local:
            build(BY_NAME["list_proposals"], {"domain": "supply", "limit": 1000})
        assert (local.value.status, local.value.extra) == (answer.status_code, {"parameter": "limit"})
        assert answer.json()["parameter"] == "limit"
