"""`lorebase up --example supply` with tracing on at ratio 1, exporting to a real OTLP receiver of the
test, on the session's PostgreSQL (a clone of the template) and NATS (a stream and subjects of its
own), each service with its /metrics listener: the stack of test_traces.py and test_dashboard.py."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from lorebase.embedded import create_database, drop_database, free_port
from tests.conftest import database_name
from tests.e2e.running import Stack
from tests.integration.otlp_receiver import OtlpReceiver

SERVICES = ("gateway", "keeper", "feed", "scribe")


@dataclass
class TracedStack:
    stack: Stack
    receiver: OtlpReceiver
    metrics_ports: dict[str, int]

    @property
    def url(self) -> str:
        return self.stack.base_url

    @property
    def admin(self) -> dict[str, str]:
        return self.stack.admin

    async def scrape(self, service: str, *, openmetrics: bool = False) -> str:
        """The service's GET /metrics (in the OpenMetrics format, which carries exemplars, if asked)."""
        headers = {"Accept": "application/openmetrics-text; version=1.0.0"} if openmetrics else {}
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            answer = await http.get(
                f"http://127.0.0.1:{self.metrics_ports[service]}/metrics", headers=headers
            )
        answer.raise_for_status()
        return answer.text


@contextlib.asynccontextmanager
async def traced_stack(
    postgres_url: str, template_database: str, nats_url: str, directory: Path
) -> AsyncIterator[TracedStack]:
    receiver = OtlpReceiver()
    endpoint = await receiver.start()
    name = f"t_{secrets.token_hex(6)}"
    url = await create_database(postgres_url, name, template=database_name(template_database))
    token = secrets.token_hex(4)
    ports = {service: free_port() for service in SERVICES}
    settings = {
        "LOREBASE_DATABASE_URL": url,
        "LOREBASE_NATS_URL": nats_url,
        # A stream and subjects of its own on the session's NATS (no other test's events).
        "LOREBASE_NATS__STREAM": f"TRACED_{token}",
        "LOREBASE_NATS__DOMAIN_SUBJECT_PREFIX": f"t{token}.domains",
        "LOREBASE_NATS__SUBJECT_PREFIX": f"t{token}.events",
        "LOREBASE_TRACING__ENABLED": "true",
        "LOREBASE_TRACING__OTLP_ENDPOINT": endpoint,
        "LOREBASE_TRACING__SAMPLE_RATIO": "1",
        "LOREBASE_TRACING__EXPORT_INTERVAL_S": "0.2",
        # The webhook receiver listens on loopback, over http.
        "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": "[https, http]",
        "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
        "LOREBASE_SCRIBE__WEBHOOKS__INTERVAL_S": "0.5",
        # An open event stream gets new commits from NATS (the hub), not from polling PostgreSQL.
        "LOREBASE_AGENTS__FEED__POLL_INTERVAL_S": "30",
        "LOREBASE_HTTP__METRICS_LISTEN": f"127.0.0.1:{ports['gateway']}",
        **{
            f"LOREBASE_SERVICES__{service.upper()}__METRICS_LISTEN": f"127.0.0.1:{ports[service]}"
            for service in SERVICES[1:]
        },
    }
    stack = Stack(
        directory / "data", free_port(), directory / "up.log", "--example", "supply", settings=settings
    )
    try:
        with httpx.Client(timeout=30, trust_env=False) as client:
            await asyncio.to_thread(stack.wait_up, client)
        yield TracedStack(stack, receiver, ports)
    finally:
        await asyncio.to_thread(stack.kill_all)
        await receiver.stop()
        await drop_database(postgres_url, name)


__all__ = ["SERVICES", "TracedStack", "traced_stack"]
