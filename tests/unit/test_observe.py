"""The gateway's request observer on a bare app: ids answered, failures logged with their id and
counted by route template."""

from __future__ import annotations

import logging

import httpx
import pytest
from lorebase_gateway.observe import RequestObserver
from prometheus_client import REGISTRY
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route


async def ok(request: Request) -> PlainTextResponse:
    logging.getLogger("lorebase.test.route").info("serving %s", request.path_params["id"])
    return PlainTextResponse("ok")


async def boom(request: Request) -> PlainTextResponse:
    raise RuntimeError("boom")


def client() -> httpx.AsyncClient:
    app = RequestObserver(Starlette(routes=[Route("/ok/{id}", ok), Route("/boom/{id}", boom)]))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://gateway.test")


async def test_the_route_logs_with_the_request_id_it_answers(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lorebase.test.route")
    async with client() as http:
        answer = await http.get("/ok/7", headers={"X-Request-Id": "req-ok-7"})
    assert answer.headers["x-request-id"] == "req-ok-7"
    [record] = [r for r in caplog.records if r.name == "lorebase.test.route"]
    assert getattr(record, "request_id", None) == "req-ok-7"


async def test_a_failing_request_is_logged_with_its_id_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    labels = {"method": "GET", "route": "/boom/{id}", "status": "500"}
    before = REGISTRY.get_sample_value("lorebase_http_requests_total", labels) or 0
    caplog.set_level(logging.ERROR, logger="lorebase.gateway")
    async with client() as http:
        answer = await http.get("/boom/1", headers={"X-Request-Id": "req-boom-1"})
    assert answer.status_code == 500
    [record] = [r for r in caplog.records if r.name == "lorebase.gateway"]
    assert getattr(record, "request_id", None) == "req-boom-1"
    assert record.exc_info is not None and "boom" in str(record.exc_info[1])
    assert REGISTRY.get_sample_value("lorebase_http_requests_total", labels) == before + 1


async def test_metrics_are_not_on_the_api_port_by_default() -> None:
    from lorebase_gateway.server import build_app

    from lorebase.config import load_settings

    app = build_app(load_settings({}))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://gateway.test"
    ) as http:
        answer = await http.get("/metrics")
    assert answer.status_code == 404 and answer.json()["code"] == "not-found"
