"""The chart's monitoring objects: the PodMonitor, the PrometheusRule (checked by Debian's real
`promtool check rules`, and each alert fired on synthetic series by `promtool test rules` with
tests/unit/alerts/lorebase.test.yaml), the Grafana dashboard's ConfigMap, and a runbook section in
docs/operations.md for every alert. The dashboard's queries against what the services expose:
tests/integration/test_observability.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.unit.test_helm import CHART, NAMESPACE, RELEASE, REQUIRED, render, with_values

ROOT = Path(__file__).resolve().parents[2]
ALERT_TESTS = Path(__file__).parent / "alerts" / "lorebase.test.yaml"
RUNBOOK_URL = "https://runbooks.example/operations.md"
ALL_ON = with_values(
    REQUIRED,
    monitoring__podMonitor={"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
    monitoring__prometheusRule={"enabled": True, "runbookUrl": RUNBOOK_URL},
    monitoring__dashboard={"enabled": True, "annotations": {"grafana_folder": "Lorebase"}},
)


@pytest.fixture(scope="module")
def chart() -> Any:
    with helm.Chart.load(str(CHART)) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def objects(chart: Any) -> list[dict[str, Any]]:
    return render(chart, ALL_ON)


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, f"{kind}: {len(found)} rendered"
    return found[0]


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: `apt-get install prometheus` (make test installs it)")
    return found


def test_monitoring_objects_are_off_by_default(chart: Any) -> None:
    kinds = {o["kind"] for o in render(chart, REQUIRED)}
    assert not kinds & {"PodMonitor", "PrometheusRule"}
    assert not [o for o in render(chart, REQUIRED) if o["metadata"]["name"].endswith("-dashboard")]


def test_the_pod_monitor_scrapes_each_service_as_the_rules_select_it(objects: list[dict[str, Any]]) -> None:
    monitor = one(objects, "PodMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    spec = monitor["spec"]
    assert spec["selector"]["matchLabels"]["app.kubernetes.io/instance"] == RELEASE
    (components,) = spec["selector"]["matchExpressions"]
    assert components["values"] == ["gateway", "keeper", "feed", "scribe"]  # not herald, not the migration
    (endpoint,) = spec["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"  # the containers' named port (test_helm)
    relabel = {r["targetLabel"]: r for r in endpoint["relabelings"]}
    assert relabel["job"]["replacement"] == f"{RELEASE}-lorebase"
    assert relabel["component"]["sourceLabels"] == ["__meta_kubernetes_pod_label_app_kubernetes_io_component"]


def test_a_pod_monitor_needs_the_metrics_port(chart: Any) -> None:
    with pytest.raises(helm.HelmError, match="metrics.enabled"):
        chart.render(with_values(ALL_ON, metrics__enabled=False), name=RELEASE, namespace=NAMESPACE)


def test_the_schema_refuses_a_latency_bound_that_is_no_bucket(chart: Any) -> None:
    with pytest.raises(helm.HelmValuesError, match="le"):
        chart.validate_schema(
            with_values(
                ALL_ON,
                monitoring__prometheusRule={"enabled": True, "latency": {"objective": 0.99, "le": "0.3"}},
            )
        )
    with pytest.raises(helm.HelmValuesError, match="monitoring"):
        chart.validate_schema(with_values(REQUIRED, monitoring__serviceMonitor={"enabled": True}))


def _rules(objects: list[dict[str, Any]], directory: Path) -> list[dict[str, Any]]:
    groups = one(objects, "PrometheusRule")["spec"]["groups"]
    (directory / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return [rule for group in groups for rule in group["rules"]]


def test_promtool_checks_the_rules_and_fires_each_alert(
    objects: list[dict[str, Any]], tmp_path: Path
) -> None:
    rules = _rules(objects, tmp_path)
    shutil.copy(ALERT_TESTS, tmp_path / ALERT_TESTS.name)
    checked = subprocess.run(
        [promtool(), "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules)} rules found" in checked.stdout
    tested = subprocess.run(
        [promtool(), "test", "rules", ALERT_TESTS.name], cwd=tmp_path, capture_output=True, text=True
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    fired = {
        case["alertname"]
        for test in yaml.safe_load(ALERT_TESTS.read_text())["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert fired == {rule["alert"] for rule in rules}, "every alert fires in a promtool test"


def test_every_alert_has_a_runbook_and_names_it(objects: list[dict[str, Any]], tmp_path: Path) -> None:
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^### (Lorebase\w+)$", operations, flags=re.M))
    for rule in _rules(objects, tmp_path):
        assert rule["alert"] in sections, f"docs/operations.md has no section for {rule['alert']}"
        assert rule["annotations"]["runbook_url"] == f"{RUNBOOK_URL}#{rule['alert'].lower()}"
        assert rule["labels"]["severity"] in ("critical", "warning", "info")


def test_the_dashboard_is_a_configmap_for_grafanas_sidecar(objects: list[dict[str, Any]]) -> None:
    (config_map,) = [o for o in objects if o["metadata"]["name"] == f"{RELEASE}-lorebase-dashboard"]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "Lorebase"}
    dashboard = json.loads(config_map["data"]["lorebase.json"])
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows == ["Overview", "Gateway", "Keeper", "Feed", "Scribe"]
    assert all(t["expr"] for p in dashboard["panels"] for t in p.get("targets", []))


def test_the_committed_dashboard_is_what_the_generator_writes() -> None:
    fresh = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_dashboard.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert fresh.returncode == 0, fresh.stderr
