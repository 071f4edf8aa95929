"""Write the chart's Grafana dashboard, deploy/helm/lorebase/dashboards/lorebase.json (never edited by hand).

An overview row, then a row per service (gateway, keeper, feed, scribe), every panel a PromQL query
on the series the chart's PodMonitor scrapes (`job`: the release, `component`: the service).
`python scripts/gen_dashboard.py` writes it; `--check` fails when the committed file differs (a
unit test runs it), and tests/integration/test_observability.py checks that every metric a panel
queries is one the services expose. docs/observability.md, "The dashboard".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "deploy" / "helm" / "lorebase" / "dashboards" / "lorebase.json"

J = 'job="$job"'
RATE = "[$__rate_interval]"
NO_STREAMS = 'route!~".*/events"'
FIVE_XX = 'status=~"5.."'


def rate(metric: str, selector: str = "", by: str = "") -> str:
    grouped = f"sum by ({by}) " if by else "sum"
    return f"{grouped}(rate({metric}{{{J}{',' + selector if selector else ''}}}{RATE}))"


def quantile(q: float, metric: str, selector: str = "", by: str = "") -> str:
    labels = f"le, {by}" if by else "le"
    return f"histogram_quantile({q}, {rate(metric + '_bucket', selector, labels)})"


def pool(component: str) -> str:
    sel = f'{J},component="{component}"'
    return (
        f"max by (pod, pool) (lorebase_db_pool_connections_in_use{{{sel}}}"
        f" / lorebase_db_pool_connections_max{{{sel}}})"
    )


# (title, unit, [(expr, legend)]) per panel, by row.
ROWS: list[tuple[str, list[tuple[str, str, list[tuple[str, str]]]]]] = [
    (
        "Overview",
        [
            ("REST requests", "reqps", [(rate("lorebase_http_requests_total"), "requests/s")]),
            (
                "REST 5xx ratio",
                "percentunit",
                [
                    (
                        rate("lorebase_http_requests_total", FIVE_XX)
                        + " / "
                        + rate("lorebase_http_requests_total"),
                        "5xx",
                    )
                ],
            ),
            (
                "REST latency (event streams aside)",
                "s",
                [
                    (quantile(0.5, "lorebase_http_request_duration_seconds", NO_STREAMS), "p50"),
                    (quantile(0.99, "lorebase_http_request_duration_seconds", NO_STREAMS), "p99"),
                ],
            ),
            ("Relay behind", "s", [(f"max(lorebase_feed_lag_seconds{{{J}}})", "oldest unpublished event")]),
            (
                "Webhook backlog",
                "short",
                [(f"max(lorebase_webhook_backlog_total_deliveries{{{J}}})", "pending deliveries")],
            ),
            ("Event streams", "short", [(f"sum(lorebase_gateway_event_streams{{{J}}})", "SSE clients")]),
            ("Pods up", "short", [(f"sum by (component) (up{{{J}}})", "{{component}}")]),
            (
                "Memory (resident)",
                "bytes",
                [(f"max by (component) (process_resident_memory_bytes{{{J}}})", "{{component}}")],
            ),
            (
                "CPU",
                "percentunit",
                [(rate("process_cpu_seconds_total", by="component"), "{{component}}")],
            ),
        ],
    ),
    (
        "Gateway",
        [
            (
                "Requests by route",
                "reqps",
                [(rate("lorebase_http_requests_total", by="method, route"), "{{method}} {{route}}")],
            ),
            (
                "Refusals and errors by route",
                "reqps",
                [
                    (
                        rate("lorebase_http_requests_total", 'status=~"[45].."', "route, status"),
                        "{{status}} {{route}}",
                    )
                ],
            ),
            (
                "p99 latency by route",
                "s",
                [
                    (
                        quantile(0.99, "lorebase_http_request_duration_seconds", NO_STREAMS, "route"),
                        "{{route}}",
                    )
                ],
            ),
            ("Requests in flight", "short", [(f"sum(lorebase_http_requests_in_flight{{{J}}})", "in flight")]),
            (
                "Connections cut off",
                "reqps",
                [(rate("lorebase_http_cut_off_total", by="reason"), "{{reason}}")],
            ),
        ],
    ),
    *[
        (
            name.capitalize(),
            [
                (
                    "RPCs by method",
                    "reqps",
                    [
                        (
                            rate("lorebase_grpc_server_handled_total", f'component="{name}"', "grpc_method"),
                            "{{grpc_method}}",
                        )
                    ],
                ),
                (
                    "RPC errors by code",
                    "reqps",
                    [
                        (
                            rate(
                                "lorebase_grpc_server_handled_total",
                                f'component="{name}",grpc_code!="OK"',
                                "grpc_method, grpc_code",
                            ),
                            "{{grpc_code}} {{grpc_method}}",
                        )
                    ],
                ),
                (
                    "RPC p99 by method",
                    "s",
                    [
                        (
                            quantile(
                                0.99,
                                "lorebase_grpc_server_handling_seconds",
                                f'component="{name}"',
                                "grpc_method",
                            ),
                            "{{grpc_method}}",
                        )
                    ],
                ),
                ("Database pool in use", "percentunit", [(pool(name), "{{pod}} {{pool}}")]),
                *extra,
            ],
        )
        for name, extra in (
            (
                "keeper",
                [("Commits", "ops", [(rate("lorebase_keeper_commits_total"), "Revisions/s")])],
            ),
            (
                "feed",
                [
                    (
                        "Relay",
                        "short",
                        [
                            (f"max(lorebase_feed_lag_events{{{J}}})", "events behind"),
                            (f"max(lorebase_outbox_backlog_events{{{J}}})", "unpublished"),
                            (f"max(lorebase_outbox_parked_events{{{J}}})", "parked"),
                        ],
                    ),
                    ("Events published", "ops", [(rate("lorebase_feed_events_published_total"), "events/s")]),
                    ("Event streams", "short", [(f"sum(lorebase_feed_event_streams{{{J}}})", "streams")]),
                    (
                        "Memory consumers behind",
                        "short",
                        [
                            (
                                f"topk(10, max by (consumer) (lorebase_memory_consumer_lag_entries{{{J}}}))",
                                "{{consumer}}",
                            )
                        ],
                    ),
                ],
            ),
            (
                "scribe",
                [
                    (
                        "Job runs",
                        "ops",
                        [
                            (
                                rate("lorebase_scribe_job_runs_total", by="scribe_job, outcome"),
                                "{{scribe_job}} {{outcome}}",
                            )
                        ],
                    ),
                    (
                        "Job p99 time",
                        "s",
                        [
                            (
                                quantile(0.99, "lorebase_scribe_job_duration_seconds", by="scribe_job"),
                                "{{scribe_job}}",
                            )
                        ],
                    ),
                    (
                        "Since each job's last success",
                        "s",
                        [
                            (
                                f"time() - max by (scribe_job) (lorebase_scribe_job_last_success_timestamp_seconds{{{J}}})",
                                "{{scribe_job}}",
                            )
                        ],
                    ),
                    (
                        "Webhook attempts by target",
                        "ops",
                        [
                            (
                                rate("lorebase_webhook_deliveries_total", by="webhook, outcome"),
                                "{{webhook}} {{outcome}}",
                            )
                        ],
                    ),
                    (
                        "Webhook backlog by target",
                        "short",
                        [(f"max by (webhook) (lorebase_webhook_backlog_deliveries{{{J}}})", "{{webhook}}")],
                    ),
                    (
                        "Oldest pending delivery by target",
                        "s",
                        [
                            (
                                f"max by (webhook) (lorebase_webhook_oldest_pending_seconds{{{J}}})",
                                "{{webhook}}",
                            )
                        ],
                    ),
                ],
            ),
        )
    ],
]

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y = 0
    next_id = 1
    for row_title, row_panels in ROWS:
        panels.append(
            {
                "id": next_id,
                "type": "row",
                "title": row_title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        next_id += 1
        y += 1
        for index, (title, unit, queries) in enumerate(row_panels):
            panels.append(
                {
                    "id": next_id,
                    "type": "timeseries",
                    "title": title,
                    "datasource": DATASOURCE,
                    "gridPos": {"h": 8, "w": 8, "x": (index % 3) * 8, "y": y + (index // 3) * 8},
                    "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                    "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
                    "targets": [
                        {
                            "refId": chr(ord("A") + n),
                            "datasource": DATASOURCE,
                            "expr": expr,
                            "legendFormat": legend,
                        }
                        for n, (expr, legend) in enumerate(queries)
                    ],
                }
            )
            next_id += 1
        y += ((len(row_panels) + 2) // 3) * 8
    return {
        "uid": "lorebase-overview",
        "title": "Lorebase",
        "description": "Requests, the relay, webhooks and event streams of a Lorebase release (docs/observability.md).",
        "tags": ["lorebase"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "templating": {
            "list": [
                {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
                {
                    "name": "job",
                    "label": "Release",
                    "type": "query",
                    "datasource": DATASOURCE,
                    "query": {"query": "label_values(lorebase_http_requests_total, job)", "refId": "job"},
                    "definition": "label_values(lorebase_http_requests_total, job)",
                    "refresh": 2,
                },
            ]
        },
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the committed file differs")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python scripts/gen_dashboard.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
