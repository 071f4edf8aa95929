"""Operability through the real stack: request ids from client to keeper's logs, the gateway's
/metrics by route template, commits and feed lag, and a stopping gateway ending its event streams."""

from __future__ import annotations

import asyncio
import logging
import socket

import httpx
import pytest
import uvicorn
from lorebase_feed.server import publication_metrics
from lorebase_gateway.app import create_app
from lorebase_gateway.server import _Server
from prometheus_client import REGISTRY

from tests.integration.conftest import Stack
from tests.integration.feed_stack import running_feed
from tests.integration.gateway_server import serving
from tests.integration.test_feed_changes import raise_risk

RECORD_ROUTE = "/api/v1/domains/{domain}/kinds/{kind}/records/{key}"


async def test_the_request_id_goes_from_the_client_to_keepers_log_and_back(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lorebase.rpc")
    response = await stack.http.get(
        "/api/v1/domains/nope/kinds/Supplier/records/S-1",
        headers={**stack.admin, "X-Request-Id": "it-req-42"},
    )
    assert response.status_code == 404
    assert response.headers["x-request-id"] == "it-req-42"

    def calls() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == "lorebase.rpc" and "Keeper/" in r.getMessage()]

    # keeper's 404 (context.abort) reaches the gateway as soon as it is sent; the RPC's log line is
    # written when keeper's handler resumes after the send, which under load may come after.
    for _ in range(100):
        if calls():
            break
        await asyncio.sleep(0.05)
    assert calls(), "keeper logs each RPC at DEBUG"
    calls_logged = calls()
    assert {getattr(r, "request_id", None) for r in calls_logged} == {"it-req-42"}
    assert "NOT_FOUND" in calls_logged[-1].getMessage()


async def test_a_request_without_a_plain_id_gets_a_new_one(stack: Stack) -> None:
    made = await stack.http.get("/api/v1/domains", headers=stack.admin)
    refused = await stack.http.get("/api/v1/domains", headers={**stack.admin, "X-Request-Id": "a b<c>"})
    assert len(made.headers["x-request-id"]) == 32
    assert refused.headers["x-request-id"] not in ("a b<c>", made.headers["x-request-id"])


async def test_gateway_metrics_count_requests_by_route_template(stack: Stack) -> None:
    labels = {"method": "GET", "route": RECORD_ROUTE, "status": "404"}
    before = REGISTRY.get_sample_value("lorebase_http_requests_total", labels) or 0
    async with (
        serving(stack.gateway) as served,
        httpx.AsyncClient(base_url=served.url, trust_env=False, timeout=20) as http,
    ):
        for key in ("S-1", "S-2", "S-3"):
            await http.get(f"/api/v1/domains/nope/kinds/Supplier/records/{key}", headers=stack.admin)
        await http.get("/no/such/endpoint/at/all")
        on_api_port = await http.get("/metrics")
        answer = await http.get(f"http://127.0.0.1:{served.metrics_port}/metrics")
    # Not on the API port (anyone could read it there, without a key): on the metrics listener.
    assert on_api_port.status_code == 404 and on_api_port.json()["code"] == "not-found"
    assert answer.status_code == 200
    assert REGISTRY.get_sample_value("lorebase_http_requests_total", labels) == before + 3
    text = answer.text
    assert f'route="{RECORD_ROUTE}"' in text
    assert 'route="unmatched"' in text
    assert "S-1" not in text and "/no/such" not in text, "never the raw path"
    assert "lorebase_http_request_duration_seconds_bucket" in text


async def test_metrics_on_the_api_port_only_when_a_setting_says_so(stack: Stack) -> None:
    async with serving(stack.gateway, LOREBASE_HTTP__METRICS_ON_API_PORT="true") as served:
        async with httpx.AsyncClient(base_url=served.url, trust_env=False, timeout=20) as http:
            answer = await http.get("/metrics")
    assert answer.status_code == 200 and "lorebase_http_requests_total" in answer.text


async def test_commits_feed_lag_and_outbox_backlog(stack: Stack, nats_url: str) -> None:
    before = REGISTRY.get_sample_value("lorebase_keeper_commits_total") or 0
    await stack.supply()
    assert REGISTRY.get_sample_value("lorebase_keeper_commits_total") == before + 2
    async with running_feed(stack, nats_url, relay=False) as feed:
        refresh = publication_metrics(stack.rt.db, feed.relay)
        await refresh()
        assert (REGISTRY.get_sample_value("lorebase_outbox_backlog_events") or 0) >= 2
        assert (REGISTRY.get_sample_value("lorebase_feed_lag_events") or 0) >= 2
        assert (REGISTRY.get_sample_value("lorebase_feed_lag_seconds") or 0) > 0
        while await feed.relay.publish_pending():
            pass
        await refresh()
        assert REGISTRY.get_sample_value("lorebase_outbox_backlog_events") == 0
        assert REGISTRY.get_sample_value("lorebase_feed_lag_events") == 0
        assert REGISTRY.get_sample_value("lorebase_feed_lag_seconds") == 0
        assert REGISTRY.get_sample_value("lorebase_feed_published_sequence") == REGISTRY.get_sample_value(
            "lorebase_feed_last_sequence"
        )


async def test_a_stopping_gateway_ends_its_event_streams_cleanly(supply: Stack, nats_url: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    async with running_feed(supply, nats_url):
        app = create_app(supply.gateway)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_config=None, lifespan="off", timeout_graceful_shutdown=30
        )
        server = _Server(config, supply.gateway)
        serving = asyncio.create_task(server.serve())
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        url = f"http://127.0.0.1:{port}/api/v1/domains/supply/branches/main/events"
        received = b""
        async with httpx.AsyncClient(trust_env=False, timeout=20) as http:
            async with http.stream("GET", url, headers=supply.admin) as response:
                assert response.status_code == 200
                chunks = response.aiter_bytes()
                received += await anext(chunks)  # the stream is open (retry: ...)
                await raise_risk(supply, 55)
                while b"\nevent: revision" not in received:
                    received += await anext(chunks, b"<END>")
                    assert not received.endswith(b"<END>"), received
                started = asyncio.get_running_loop().time()
                server.should_exit = True  # what SIGTERM does
                async for chunk in chunks:  # ends without a protocol error: a clean end of the body
                    received += chunk
                assert asyncio.get_running_loop().time() - started < 10, "not held for the grace period"
        await asyncio.wait_for(serving, 15)
        assert supply.gateway.draining and not supply.gateway.streams
        async with httpx.AsyncClient(trust_env=False) as after:
            with pytest.raises(httpx.ConnectError):
                await after.get(url, headers=supply.admin)
