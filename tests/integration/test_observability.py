"""Observability through the real stack (tests/integration/traced_stack.py: `lorebase up` with tracing
on, a real OTLP receiver, real PostgreSQL and NATS): one trace from a client's `traceparent` to the
SSE frame and the webhook delivery, exemplars naming it, and the chart's dashboard querying only
metrics that the services expose."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import helm_python as helm
import httpx
import orjson
import pytest
import pytest_asyncio

from tests.integration.otlp_receiver import Received
from tests.integration.test_webhooks import Receiver
from tests.integration.traced_stack import SERVICES, TracedStack, traced_stack
from tests.unit.test_helm_monitoring import ALL_ON, CHART, render

DOMAIN = "/api/v1/domains/supply"
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5  # OTLP span kinds


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def traced(
    postgres_url: str, template_database: str, nats_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[TracedStack]:
    directory: Path = tmp_path_factory.mktemp("traced")
    async with traced_stack(postgres_url, template_database, nats_url, directory) as stack:
        yield stack


async def _first_frame(
    http: httpx.AsyncClient, opened: asyncio.Event, admin: dict[str, str]
) -> dict[str, str]:
    """Open main's event stream, say when its first bytes came, and answer its first event frame."""
    async with http.stream("GET", f"{DOMAIN}/branches/main/events", headers=admin) as stream:
        fields: dict[str, str] = {}
        async for line in stream.aiter_lines():
            opened.set()
            if not line:
                if "data" in fields:
                    return fields
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
    raise AssertionError("the event stream ended before an event")


def delivered(target: Receiver, revision: str) -> dict[str, str] | None:
    """The headers of the webhook delivery of `revision` to `target`, once it came."""
    for headers, body in target.requests:
        if revision.encode() in body:
            return headers
    return None


def _one(spans: list[Received], description: str, **match: object) -> Received:
    found = [s for s in spans if all(getattr(s, k) == v for k, v in match.items())]
    assert len(found) >= 1, f"no {description} span in {[(s.service, s.name) for s in spans]}"
    return found[0]


async def test_one_trace_from_the_callers_traceparent_to_the_sse_frame_and_the_webhook(
    traced: TracedStack,
) -> None:
    trace_id, caller_span = secrets.token_hex(16), secrets.token_hex(8)
    target = Receiver([])
    async with (
        target as hook_url,
        httpx.AsyncClient(base_url=traced.url, timeout=30, trust_env=False) as http,
    ):
        hook = await http.post(
            f"{DOMAIN}/webhooks", json={"url": hook_url, "branches": ["main"]}, headers=traced.admin
        )
        assert hook.status_code == 201, hook.text
        opened = asyncio.Event()
        frame = asyncio.create_task(_first_frame(http, opened, traced.admin))
        async with asyncio.timeout(30):
            await opened.wait()
        executed = await http.post(
            f"{DOMAIN}/operations/update_supplier/execute",
            json={"parameters": {"key": "S-1001", "risk_score": 42}, "message": "Traced"},
            headers={**traced.admin, "traceparent": f"00-{trace_id}-{caller_span}-01"},
        )
        assert executed.status_code == 200, executed.text
        revision = executed.json()["revision"]
        assert trace_id in executed.headers["traceresponse"]  # the trace goes on, and says so
        async with asyncio.timeout(60):
            fields = await frame
            while not delivered(target, revision):  # noqa: ASYNC110 (the receiver signals nothing)
                await asyncio.sleep(0.1)
        assert orjson.loads(fields["data"])["revision"] == revision
        delivered_headers = delivered(target, revision)
        assert delivered_headers is not None and trace_id in delivered_headers["traceparent"]

    receiver = traced.receiver
    expected = ("send SSE frame", "receive outbox event", "publish outbox event", "deliver webhook")
    await receiver.wait_for(lambda: {s.name for s in receiver.of_trace(trace_id)} >= set(expected))
    # Each process exports a span when it ends: wait for the last ones to arrive too.
    await receiver.wait_for(lambda: sum(s.kind == CLIENT for s in receiver.of_trace(trace_id)) >= 3)
    spans = receiver.of_trace(trace_id)
    assert {s.service for s in spans} == {
        "lorebase-gateway",
        "lorebase-keeper",
        "lorebase-feed",
        "lorebase-scribe",
    }

    request = _one(spans, "gateway request", service="lorebase-gateway", kind=SERVER)
    assert request.parent_id == caller_span  # the caller's trace continues
    assert request.name == "POST /api/v1/domains/{domain}/operations/{operation}/execute"  # by template
    call = _one(spans, "gateway's gRPC call", service="lorebase-gateway", kind=CLIENT)
    assert call.parent_id == request.span_id and call.attributes.get("rpc.method") == "ExecuteOperation"
    rpc = _one(spans, "keeper's RPC", service="lorebase-keeper", kind=SERVER)
    assert rpc.parent_id == call.span_id
    commit = _one(spans, "commit", service="lorebase-keeper", name="commit")
    transaction = _one(spans, "commit transaction", name="commit transaction")
    assert transaction.parent_id == commit.span_id
    statements = [
        s for s in spans if s.service == "lorebase-keeper" and s.attributes.get("db.system") == "postgresql"
    ]
    assert any(s.parent_id == transaction.span_id for s in statements), "the commit's PostgreSQL statements"
    publish = _one(spans, "publish", service="lorebase-feed", name="publish outbox event", kind=PRODUCER)
    assert publish.parent_id == commit.span_id  # the traceparent stored with the outbox event
    received = _one(spans, "receive", service="lorebase-feed", name="receive outbox event", kind=CONSUMER)
    assert received.parent_id == publish.span_id  # carried in the NATS message's headers
    sent = _one(spans, "SSE frame", service="lorebase-gateway", name="send SSE frame")
    assert sent.parent_id == received.span_id  # carried in the event stream's StreamItem
    delivery = _one(spans, "webhook delivery", service="lorebase-scribe", name="deliver webhook")
    assert delivery.parent_id == commit.span_id and delivery.status != 2
    post = _one(spans, "webhook POST", service="lorebase-scribe", kind=CLIENT)
    assert post.parent_id == delivery.span_id

    # The latency histograms name the trace in an exemplar (OpenMetrics, as Prometheus scrapes it).
    for service, histogram in (
        ("gateway", "lorebase_http_request_duration_seconds_bucket"),
        ("keeper", "lorebase_grpc_server_handling_seconds_bucket"),
    ):
        text = await traced.scrape(service, openmetrics=True)
        assert any(
            line.startswith(histogram) and f'trace_id="{trace_id}"' in line for line in text.splitlines()
        ), f"no exemplar of the trace in {service}'s {histogram}"


async def test_problems_and_request_ids_come_back_whole_with_tracing_on(traced: TracedStack) -> None:
    """The tracing interceptors sit around every call: a refused one still answers its problem."""
    async with httpx.AsyncClient(base_url=traced.url, timeout=30, trust_env=False) as http:
        missing = await http.get(
            f"{DOMAIN}/kinds/Supplier/records/S-9999", headers={**traced.admin, "X-Request-Id": "traced-404"}
        )
        refused = await http.post(
            f"{DOMAIN}/operations/update_supplier/execute",
            json={"parameters": {"key": "S-1001", "risk_score": 1000}},
            headers=traced.admin,
        )
    assert missing.status_code == 404 and missing.json()["type"].endswith("not-found")
    assert missing.headers["x-request-id"] == "traced-404" and "traceresponse" in missing.headers
    assert refused.status_code == 422 and refused.json()["issues"], refused.text


# PromQL words that are not metric names, and what to cut before looking for names.
_KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "offset",
    "bool",
}
_CUT = (r'"(?:[^"\\]|\\.)*"', r"\{[^}]*\}", r"\[[^\]]*\]", r"\b(?:by|without|on|ignoring)\s*\([^)]*\)")
# Series that Prometheus makes itself for every target.
_PROMETHEUS_OWN = {"up"}
_SUFFIXES = {"histogram": ("_bucket", "_count", "_sum"), "summary": ("_count", "_sum")}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads."""
    for pattern in _CUT:
        expr = re.sub(pattern, " ", expr)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        rest = expr[match.end() :].lstrip()
        if rest.startswith("(") or match.group() in _KEYWORDS:
            continue
        names.add(match.group())
    return names


def exposed(text: str) -> set[str]:
    """The series names a /metrics answer (text format) declares or holds."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            names.update({name, *(name + suffix for suffix in _SUFFIXES.get(kind, ()))})
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


async def test_every_dashboard_and_alert_query_names_a_metric_the_services_expose(
    traced: TracedStack,
) -> None:
    names = set(_PROMETHEUS_OWN)
    for service in SERVICES:
        names |= exposed(await traced.scrape(service))
    dashboard = orjson.loads((CHART / "dashboards" / "lorebase.json").read_bytes())
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    # The release variable's query: label_values(<metric>, job).
    queries.append(dashboard["templating"]["list"][1]["query"]["query"].split("(", 1)[1].split(",")[0])
    with helm.Chart.load(str(CHART)) as chart:
        (rule,) = [o for o in render(chart, ALL_ON) if o["kind"] == "PrometheusRule"]
    alerts = [r["expr"] for group in rule["spec"]["groups"] for r in group["rules"]]
    assert len(queries) > 40 and len(alerts) >= 14
    unknown = {
        f"{name} (in {expr})" for expr in queries + alerts for name in metric_names(expr) if name not in names
    }
    assert unknown == set(), "queries of metrics no service exposes"
    # The extraction finds the names (a regex that found none would pass any dashboard).
    assert metric_names(queries[1]) == {"lorebase_http_requests_total"}
