"""The Helm chart: linted strictly and rendered offline (helm-python-sdk, Helm 4 without a binary),
installed as a stock `helm install` does it (client dry run: schema, dependency check, render),
every manifest validated strictly against pinned Kubernetes schemas (kubernetes-validate) for the
defaults and each values example, values.schema.json refusing bad values, and the rendered objects
keeping the contracts the services rely on (Herald included)."""

from __future__ import annotations

import base64
import copy
import json
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import helm_python as helm
import httpx
import kubernetes_validate
import pytest
import yaml

from lorebase.cli import COMMANDS, build_parser
from lorebase.clients.rest import RestSettings
from lorebase.config import defaults, load_settings
from lorebase.herald.server import PROTECTED_RESOURCE_PATH, http_app
from lorebase_store.migrate import engine_target

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "lorebase"
EXAMPLES = ROOT / "deploy" / "helm" / "examples"
PRODUCTION = EXAMPLES / "production.yaml"
EXAMPLE_NAMES = sorted(path.stem for path in EXAMPLES.glob("*.yaml"))
# The chart's minimum (Chart.yaml kubeVersion: native gRPC probes) and a current release.
KUBERNETES_VERSIONS = ["1.27.0", "1.33.0"]
RELEASE, NAMESPACE = "lb", "lorebase"
# The chart's defaults plus the two values it cannot have defaults for.
REQUIRED = {
    "database": {"url": "postgresql://lorebase:secret@pg.internal:5432/lorebase"},
    "externalNats": {"url": "nats://nats.internal:4222"},
}
COMPONENTS = ["gateway", "keeper", "feed", "scribe"]


def with_values(base: Mapping[str, Any], **dotted: Any) -> dict[str, Any]:
    """`base` with `a__b__c=value` set at a.b.c."""
    values = copy.deepcopy(dict(base))
    for path, value in dotted.items():
        node = values
        *parents, last = path.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return values


@pytest.fixture(scope="module")
def chart() -> Iterator[Any]:
    with helm.Chart.load(str(CHART)) as loaded:
        yield loaded


def render(chart: Any, values: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    manifests = chart.render(dict(values) if values is not None else None, name=RELEASE, namespace=NAMESPACE)
    objects: list[dict[str, Any]] = []
    for path, text in sorted(manifests.items()):
        if path.endswith("NOTES.txt"):
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return objects


def example_values(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return loaded


def production_values() -> dict[str, Any]:
    return example_values("production")


def named_values(name: str) -> dict[str, Any]:
    """`defaults` (the chart's defaults plus the two required URLs) or an example's values."""
    return copy.deepcopy(REQUIRED) if name == "defaults" else example_values(name)


@pytest.fixture(scope="module")
def default_objects(chart: Any) -> list[dict[str, Any]]:
    return render(chart, REQUIRED)


@pytest.fixture(scope="module")
def production_objects(chart: Any) -> list[dict[str, Any]]:
    return render(chart, production_values())


def find(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [
        o
        for o in objects
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == f"{RELEASE}-lorebase-{name}")
    ]


def one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = find(objects, kind, name)
    assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
    return found[0]


def pod_specs(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for o in objects:
        if o["kind"] in ("Deployment", "Job"):
            yield o["metadata"]["name"], o["spec"]["template"]["spec"]
        elif o["kind"] == "Pod":
            yield o["metadata"]["name"], o["spec"]


def secret_value(secret: dict[str, Any], key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


# -- lint and Kubernetes schemas -----------------------------------------------------------------


def test_the_examples_are_there() -> None:
    assert EXAMPLE_NAMES == [
        "cluster",
        "external-nats",
        "external-postgres-tls",
        "ingress-tls",
        "production",
        "replicas-pdb",
    ]


@pytest.mark.parametrize("values_name", ["defaults", *EXAMPLE_NAMES])
def test_the_chart_lints_clean_in_strict_mode(values_name: str) -> None:
    report = helm.lint(str(CHART), named_values(values_name), strict=True, kube_version="v1.33.0")
    # Strict: a warning fails as an error would. Only information (e.g. "icon is recommended") remains.
    assert [m for m in report["messages"] if m["severity"] >= 2] == []
    assert report["errors"] == []


def test_the_chart_has_no_dependency_to_fetch() -> None:
    """`helm install/upgrade/template` refuse a chart whose declared dependency is not vendored,
    whatever its condition: the chart declares none (NATS is a release of its own)."""
    assert helm.dependency_list(str(CHART)) == []
    assert "dependencies" not in yaml.safe_load((CHART / "Chart.yaml").read_text())


@pytest.mark.parametrize("values_name", ["defaults", *EXAMPLE_NAMES])
def test_a_stock_install_accepts_the_chart(values_name: str) -> None:
    """What `helm install --dry-run=client` runs: the schema, the dependency check and the render."""
    with helm.Config(namespace=NAMESPACE, storage_driver="memory", kubeconfig_content=OFFLINE) as config:
        release = config.install(
            str(CHART), RELEASE, named_values(values_name), namespace=NAMESPACE, dry_run="client"
        )
    assert release["chart_name"] == "lorebase"
    kinds = {doc["kind"] for doc in yaml.safe_load_all(release["manifest"]) if doc}
    assert {"Deployment", "Service", "ConfigMap"} <= kinds


# A kubeconfig naming a server nothing listens on: a client dry run must not need one.
OFFLINE = yaml.safe_dump(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "none", "user": {}}],
        "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}],
        "current-context": "none",
    }
)


@pytest.fixture(scope="module")
def rendered(chart: Any) -> dict[str, list[dict[str, Any]]]:
    """The objects of the defaults and of each example, rendered once."""
    return {name: render(chart, named_values(name)) for name in ["defaults", *EXAMPLE_NAMES]}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("values_name", ["defaults", *EXAMPLE_NAMES])
def test_every_manifest_is_valid_kubernetes(
    values_name: str, version: str, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    objects = rendered[values_name]
    assert len(objects) > 15
    for o in objects:
        # Strict: unknown fields fail; a kind without a schema raises SchemaNotFoundError and fails too.
        kubernetes_validate.validate(o, version, strict=True)


def test_the_defaults_render_every_part_of_the_chart(default_objects: list[dict[str, Any]]) -> None:
    kinds = sorted({o["kind"] for o in default_objects})
    assert kinds == [
        "ConfigMap",
        "Deployment",
        "Job",
        "NetworkPolicy",
        "Pod",
        "PodDisruptionBudget",
        "Secret",
        "Service",
        "ServiceAccount",
    ]
    assert {
        d["metadata"]["labels"]["app.kubernetes.io/component"] for d in find(default_objects, "Deployment")
    } == set(COMPONENTS)
    assert find(default_objects, "Ingress") == []  # optional, off by default


# -- values.schema.json ----------------------------------------------------------------------------

BAD_VALUES = {
    "no database URL": ({"externalNats": REQUIRED["externalNats"]}, "/database"),
    "no NATS URL": ({"database": REQUIRED["database"]}, "/externalNats"),
    "database URL of another kind": (with_values(REQUIRED, database__url="mysql://h/db"), "/database/url"),
    "NATS URL of another kind": (
        with_values(REQUIRED, externalNats__url="http://h:4222"),
        "/externalNats/url",
    ),
    "replicas as text": (with_values(REQUIRED, keeper__replicas="two"), "/keeper/replicas"),
    "negative replicas": (with_values(REQUIRED, gateway__replicas=-1), "/gateway/replicas"),
    "enabled as text": (with_values(REQUIRED, feed__enabled="yes"), "/feed/enabled"),
    "port out of range": (with_values(REQUIRED, keeper__port=70000), "/keeper/port"),
    "misspelt component value": (with_values(REQUIRED, scribe__replica=2), "replica"),
    "misspelt top-level value": (with_values(REQUIRED, ingres={"enabled": True}), "ingres"),
    "unknown pull policy": (with_values(REQUIRED, image__pullPolicy="Sometimes"), "/image/pullPolicy"),
    "unknown Service type": (
        with_values(REQUIRED, gateway__service__type="ExternalName"),
        "/gateway/service/type",
    ),
    "unknown path type": (
        with_values(
            REQUIRED, ingress__hosts=[{"host": "x", "paths": [{"path": "/", "pathType": "Everything"}]}]
        ),
        "pathType",
    ),
    "short encryption key": (
        with_values(REQUIRED, webhooks__encryptionKey="too-short"),
        "/webhooks/encryptionKey",
    ),
    "short admin key": (with_values(REQUIRED, admin__key="abc"), "/admin/key"),
    "root pods": (with_values(REQUIRED, podSecurityContext__runAsNonRoot=False), "runAsNonRoot"),
    "privilege escalation": (
        with_values(REQUIRED, securityContext__allowPrivilegeEscalation=True),
        "allowPrivilegeEscalation",
    ),
    "database URL in the settings file": (
        with_values(REQUIRED, config={"database": {"url": "postgresql://h/db"}}),
        "/config/database/url",
    ),
    "encryption key in the settings file": (
        with_values(REQUIRED, config={"webhooks": {"encryption_key": "x" * 40}}),
        "/config/webhooks/encryption_key",
    ),
    "listen address in the settings file": (
        with_values(REQUIRED, config={"services": {"keeper": {"listen": "0.0.0.0:1"}}}),
        "/config/services/keeper",
    ),
    "both PDB bounds": (
        with_values(
            REQUIRED, keeper__podDisruptionBudget={"enabled": True, "minAvailable": 1, "maxUnavailable": 1}
        ),
        "/keeper/podDisruptionBudget",
    ),
    "resources as text": (with_values(REQUIRED, gateway__resources="lots"), "/gateway/resources"),
    "the removed NATS dependency": (with_values(REQUIRED, nats={"enabled": True}), "nats-values.yaml"),
    "CA from a Secret and a ConfigMap": (
        with_values(
            REQUIRED,
            database__caCertificate={"secretName": "a", "configMapName": "b", "key": "ca.crt"},
        ),
        "/database/caCertificate",
    ),
    "Herald port out of range": (with_values(REQUIRED, herald__port=0), "/herald/port"),
    "Herald Domain not a Domain name": (
        with_values(REQUIRED, herald__domain="Supply Chain"),
        "/herald/domain",
    ),
    "ingress to an unknown component": (
        with_values(
            REQUIRED,
            ingress__hosts=[
                {"host": "x", "paths": [{"path": "/", "pathType": "Prefix", "component": "keeper"}]}
            ],
        ),
        "component",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_the_schema_refuses_bad_values(chart: Any, case: str) -> None:
    values, where = BAD_VALUES[case]
    with pytest.raises(helm.HelmValuesError) as refused:
        chart.validate_schema(values)
    assert where in str(refused.value)
    with pytest.raises(helm.HelmError):  # and nothing renders (helm install/template refuse alike)
        chart.render(values, name=RELEASE, namespace=NAMESPACE)


@pytest.mark.parametrize(
    "values",
    [
        REQUIRED,
        production_values(),
        with_values(REQUIRED, keeper__podDisruptionBudget={"enabled": True, "minAvailable": "50%"}),
    ],
    ids=["required", "production", "percent PDB"],
)
def test_the_schema_accepts_good_values(chart: Any, values: dict[str, Any]) -> None:
    chart.validate_schema(values)


# -- what the services rely on ------------------------------------------------------------------


def test_each_deployment_runs_its_service_command(default_objects: list[dict[str, Any]]) -> None:
    for name in COMPONENTS:
        container = one(default_objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        assert container["args"] == [name]
        assert name in COMMANDS
    job = find(default_objects, "Job")[0]
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"]
    assert "migrate" in COMMANDS


def test_grpc_services_are_probed_through_the_grpc_health_service(
    default_objects: list[dict[str, Any]],
) -> None:
    for name, port in (("keeper", 50051), ("feed", 50052), ("scribe", 50053)):
        container = one(default_objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        assert container["ports"] == [
            {"name": "grpc", "containerPort": port, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == port
        # grpc_serve marks "" and lorebase.v1.<Name> SERVING.
        assert container["readinessProbe"]["grpc"]["service"] == f"lorebase.v1.{name.capitalize()}"


def test_the_gateway_is_ready_when_health_answers(default_objects: list[dict[str, Any]]) -> None:
    container = one(default_objects, "Deployment", "gateway")["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    # Liveness does not depend on keeper: an outage there must not restart every gateway.
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert container["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "5"]


def test_every_pod_runs_locked_down(default_objects: list[dict[str, Any]]) -> None:
    specs = dict(pod_specs(default_objects))
    assert len(specs) == 6  # four services, the migration Job, the test Pod
    for name, spec in specs.items():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False, name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            assert "memory" in container["resources"]["limits"], name
        if not name.endswith("test-health"):
            mounts = {m["mountPath"]: m["name"] for m in spec["containers"][0]["volumeMounts"]}
            assert mounts["/tmp"] == "tmp", name
            assert {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}} in spec["volumes"], name


def test_the_settings_file_loads_with_the_project_loader(
    default_objects: list[dict[str, Any]], tmp_path: Path
) -> None:
    configmap = one(default_objects, "ConfigMap", "config")
    deployment = one(default_objects, "Deployment", "keeper")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    config_path = env["LOREBASE_CONFIG"]["value"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "config")
    assert config_path == f"{mount['mountPath']}/lorebase.yaml"
    path = tmp_path / "lorebase.yaml"
    path.write_text(configmap["data"]["lorebase.yaml"])
    settings = load_settings({"LOREBASE_CONFIG": str(path)})
    assert settings.get("http.host") == "0.0.0.0"
    assert settings.get("http.port") == 8080
    assert settings.get("services.keeper.listen") == "0.0.0.0:50051"
    assert (
        settings.get("services.feed.address")
        == f"{RELEASE}-lorebase-feed.{NAMESPACE}.svc.cluster.local:50052"
    )
    assert settings.get("read.query.max_limit") == defaults()["read"]["query"]["max_limit"]


def test_every_component_is_scraped_for_metrics(
    default_objects: list[dict[str, Any]], tmp_path: Path
) -> None:
    for name in COMPONENTS:
        annotations = one(default_objects, "Deployment", name)["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/path"] == "/metrics"
        assert annotations["prometheus.io/port"] == "9090"  # the gateway's too: not its HTTP port
        ports = one(default_objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]["ports"]
        assert {"name": "metrics", "containerPort": 9090, "protocol": "TCP"} in ports
    path = tmp_path / "lorebase.yaml"
    path.write_text(one(default_objects, "ConfigMap", "config")["data"]["lorebase.yaml"])
    settings = load_settings({"LOREBASE_CONFIG": str(path)})
    assert settings.get("http.metrics_listen") == "0.0.0.0:9090"
    assert settings.get("http.metrics_on_api_port") is False, "never on the port the Ingress exposes"
    for name in ("keeper", "feed", "scribe"):
        assert settings.get(f"services.{name}.metrics_listen") == "0.0.0.0:9090"


def leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for name, value in tree.items():
        if isinstance(value, Mapping):
            yield from leaves(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}"


@pytest.mark.parametrize("values_name", ["defaults", "production"])
def test_the_settings_file_names_only_real_settings(
    values_name: str, default_objects: list[dict[str, Any]], production_objects: list[dict[str, Any]]
) -> None:
    objects = default_objects if values_name == "defaults" else production_objects
    rendered = yaml.safe_load(one(objects, "ConfigMap", "config")["data"]["lorebase.yaml"])
    known = set(leaves(defaults()))
    assert sorted(set(leaves(rendered)) - known) == []


def test_urls_and_keys_reach_every_service_from_secrets(default_objects: list[dict[str, Any]]) -> None:
    secret = one(default_objects, "Secret", "secrets")
    assert secret_value(secret, "database-url") == REQUIRED["database"]["url"]
    assert secret_value(secret, "nats-url") == REQUIRED["externalNats"]["url"]
    # Generated on install (`lookup` keeps them on upgrades; offline it finds nothing).
    assert (
        secret_value(secret, "admin-key").startswith("lbk_") and len(secret_value(secret, "admin-key")) == 44
    )
    assert len(secret_value(secret, "webhooks-encryption-key")) >= 32
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    wanted = {
        "LOREBASE_DATABASE_URL": "database-url",
        "LOREBASE_NATS_URL": "nats-url",
        "LOREBASE_ADMIN_KEY": "admin-key",
        "LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "webhooks-encryption-key",
    }
    for name in COMPONENTS:
        container = one(default_objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e for e in container["env"]}
        for variable, key in wanted.items():
            assert env[variable]["valueFrom"]["secretKeyRef"] == {
                "name": f"{RELEASE}-lorebase-secrets",
                "key": key,
            }
    # Each variable is a setting the services read.
    settings = load_settings({variable: "x" * 40 for variable in wanted})
    assert settings.get("webhooks.encryption_key") == "x" * 40
    assert settings.get("admin.key") == "x" * 40


class _KubeApi(BaseHTTPRequestHandler):
    """Just enough of a Kubernetes API server for Helm's `lookup` of one Secret."""

    objects: dict[str, dict[str, Any]] = {}

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/api/v1":
            body: dict[str, Any] = {
                "kind": "APIResourceList",
                "groupVersion": "v1",
                "resources": [
                    {
                        "name": "secrets",
                        "singularName": "secret",
                        "namespaced": True,
                        "kind": "Secret",
                        "verbs": ["get"],
                    }
                ],
            }
        elif path in self.objects:
            body = self.objects[path]
        else:
            body = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "code": 404,
            }
        data = json.dumps(body).encode()
        self.send_response(200 if body.get("kind") != "Status" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_generated_keys_are_kept_on_upgrade(chart: Any) -> None:
    """An upgrade renders the keys the live Secret holds (`lookup`), not new ones."""
    live = {"admin-key": "lbk_" + "L" * 40, "webhooks-encryption-key": "E" * 48}
    _KubeApi.objects = {
        f"/api/v1/namespaces/{NAMESPACE}/secrets/{RELEASE}-lorebase-secrets": {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{RELEASE}-lorebase-secrets", "namespace": NAMESPACE},
            "data": {key: base64.b64encode(value.encode()).decode() for key, value in live.items()},
        }
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KubeApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "k", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}
            ],
            "users": [{"name": "k", "user": {"token": "t"}}],
            "contexts": [{"name": "k", "context": {"cluster": "k", "user": "k", "namespace": NAMESPACE}}],
            "current-context": "k",
        }
    )
    try:
        with helm.Config(kubeconfig_content=kubeconfig, namespace=NAMESPACE) as config:
            manifests = config.render(chart, REQUIRED, name=RELEASE, namespace=NAMESPACE, is_upgrade=True)
    finally:
        server.shutdown()
        server.server_close()
    secret = yaml.safe_load(manifests["lorebase/templates/secret.yaml"])
    assert {key: secret_value(secret, key) for key in live} == live
    assert secret_value(secret, "database-url") == REQUIRED["database"]["url"]  # values still win


def test_given_keys_are_used_as_given(chart: Any) -> None:
    values = with_values(REQUIRED, admin__key="lbk_" + "a" * 40, webhooks__encryptionKey="k" * 32)
    secret = one(render(chart, values), "Secret", "secrets")
    assert secret_value(secret, "admin-key") == "lbk_" + "a" * 40
    assert secret_value(secret, "webhooks-encryption-key") == "k" * 32


def test_existing_secrets_replace_the_charts(production_objects: list[dict[str, Any]]) -> None:
    assert find(production_objects, "Secret") == []  # every value comes from the user's Secrets
    container = one(production_objects, "Deployment", "keeper")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e}
    assert env["LOREBASE_DATABASE_URL"] == {"name": "lorebase-connections", "key": "database-url"}
    assert env["LOREBASE_NATS_URL"] == {"name": "lorebase-connections", "key": "nats-url"}
    assert env["LOREBASE_ADMIN_KEY"] == {"name": "lorebase-keys", "key": "admin-key"}
    assert env["LOREBASE_WEBHOOKS__ENCRYPTION_KEY"] == {
        "name": "lorebase-keys",
        "key": "webhooks-encryption-key",
    }
    job = find(production_objects, "Job")[0]["spec"]["template"]["spec"]["containers"][0]
    assert job["env"][-1]["valueFrom"]["secretKeyRef"] == {
        "name": "lorebase-connections",
        "key": "database-url",
    }


def test_the_migration_runs_before_install_and_upgrade(default_objects: list[dict[str, Any]]) -> None:
    job = one(default_objects, "Job", "migrate")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    # Hooks run before the release's Secret exists: the Job has its own, created first.
    secret = one(default_objects, "Secret", "migrate")
    assert secret["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert int(secret["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(
        job["metadata"]["annotations"]["helm.sh/hook-weight"]
    )
    assert secret_value(secret, "database-url") == REQUIRED["database"]["url"]
    spec = job["spec"]["template"]["spec"]
    assert spec["restartPolicy"] == "Never"
    assert "serviceAccountName" not in spec  # the chart's ServiceAccount does not exist yet


def test_helm_test_calls_health_through_the_gateway_service(default_objects: list[dict[str, Any]]) -> None:
    pod = one(default_objects, "Pod", "test-health")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    service = one(default_objects, "Service", "gateway")
    port = service["spec"]["ports"][0]["port"]
    assert f"http://{RELEASE}-lorebase-gateway:{port}/health" in pod["spec"]["containers"][0]["args"][0]


def test_grpc_services_are_headless_and_the_gateway_is_not(default_objects: list[dict[str, Any]]) -> None:
    for name in ("keeper", "feed", "scribe"):
        assert one(default_objects, "Service", name)["spec"]["clusterIP"] == "None"
    assert one(default_objects, "Service", "gateway")["spec"]["type"] == "ClusterIP"


def test_network_policies_open_only_the_gateway(default_objects: list[dict[str, Any]]) -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in find(default_objects, "NetworkPolicy")}
    release = {"app.kubernetes.io/name": "lorebase", "app.kubernetes.io/instance": RELEASE}
    everyone = policies[f"{RELEASE}-lorebase"]
    assert everyone["podSelector"]["matchLabels"] == release
    assert everyone["ingress"] == [{"from": [{"podSelector": {"matchLabels": release}}]}]
    egress_ports = {p["port"] for rule in everyone["egress"] for p in rule.get("ports", [])}
    assert {53, 5432, 4222} <= egress_ports
    gateway = policies[f"{RELEASE}-lorebase-gateway"]
    assert gateway["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "gateway"
    assert gateway["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"}]}]
    webhooks = policies[f"{RELEASE}-lorebase-scribe-webhooks"]
    assert webhooks["policyTypes"] == ["Egress"]
    assert webhooks["egress"][0]["ports"] == [{"port": 443, "protocol": "TCP"}]


def test_production_is_replicated_and_behind_an_sse_safe_ingress(
    production_objects: list[dict[str, Any]],
) -> None:
    for name in ("gateway", "keeper", "feed"):
        assert one(production_objects, "Deployment", name)["spec"]["replicas"] >= 2
        assert (
            "cpu"
            in one(production_objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0][
                "resources"
            ]["requests"]
        )
    ingress = one(production_objects, "Ingress", "gateway")
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert annotations["cert-manager.io/cluster-issuer"] == "letsencrypt"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": f"{RELEASE}-lorebase-gateway", "port": {"name": "http"}}
    assert ingress["spec"]["tls"] == [{"secretName": "lorebase-tls", "hosts": ["lorebase.example.com"]}]
    assert one(production_objects, "PodDisruptionBudget", "keeper")["spec"] == {
        "minAvailable": 2,
        "selector": {"matchLabels": {**dict(release_labels()), "app.kubernetes.io/component": "keeper"}},
    }


def release_labels() -> dict[str, str]:
    return {"app.kubernetes.io/name": "lorebase", "app.kubernetes.io/instance": RELEASE}


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_disabled_component_renders_nothing(chart: Any, component: str) -> None:
    objects = render(chart, with_values(REQUIRED, **{f"{component}__enabled": False}))
    named = [o for o in objects if o["metadata"]["name"] == f"{RELEASE}-lorebase-{component}"]
    assert named == []


def test_the_image_runs_as_the_user_the_chart_expects() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    uid = values["podSecurityContext"]["runAsUser"]
    assert f"USER {uid}:{uid}" in dockerfile
    assert 'ENTRYPOINT ["lorebase"]' in dockerfile
    chart_meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{chart_meta["appVersion"]}"' in pyproject


# -- Herald ------------------------------------------------------------------------------------------


def container_of(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    container: dict[str, Any] = one(objects, kind, name)["spec"]["template"]["spec"]["containers"][0]
    return container


def test_herald_is_off_by_default(default_objects: list[dict[str, Any]]) -> None:
    assert [o for o in default_objects if o["metadata"]["name"].endswith("-herald")] == []


@pytest.fixture(scope="module")
def herald_objects(chart: Any) -> list[dict[str, Any]]:
    return render(chart, with_values(REQUIRED, herald__enabled=True, herald__domain="supply"))


def test_herald_serves_mcp_over_http_towards_the_gateway(herald_objects: list[dict[str, Any]]) -> None:
    container = container_of(herald_objects, "Deployment", "herald")
    # The command line is one the CLI accepts, with the flags it has.
    args = build_parser().parse_args(container["args"])
    assert (args.command, args.transport, args.host, args.port) == ("herald", "http", "0.0.0.0", 8765)
    env = {e["name"]: e for e in container["env"]}
    gateway = one(herald_objects, "Service", "gateway")
    port = gateway["spec"]["ports"][0]["port"]
    assert (
        env["LOREBASE_URL"]["value"]
        == f"http://{RELEASE}-lorebase-gateway.{NAMESPACE}.svc.cluster.local:{port}"
    )
    assert env["LOREBASE_DOMAIN"]["value"] == "supply"
    assert container["ports"] == [{"name": "http", "containerPort": 8765, "protocol": "TCP"}]
    for probe in ("startupProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": PROTECTED_RESOURCE_PATH, "port": "http"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}


async def test_herald_answers_its_probe_without_a_credential(herald_objects: list[dict[str, Any]]) -> None:
    """The probe's path, asked of Herald's real HTTP app with no Authorization header, is a 200."""
    container = container_of(herald_objects, "Deployment", "herald")
    path = container["readinessProbe"]["httpGet"]["path"]
    app = http_app(RestSettings(url="http://127.0.0.1:9"), domain="supply", host="0.0.0.0")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://herald") as client:
        answer = await client.get(path)
        assert answer.status_code == 200
        assert answer.json()["resource"] == "http://herald/mcp"
        assert (await client.post("/mcp", json={})).status_code == 401  # MCP itself needs a key
    service = one(herald_objects, "Service", "herald")
    assert service["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "herald"
    # An MCP session lives in the process that opened it: a caller stays on one pod.
    assert service["spec"]["sessionAffinity"] == "ClientIP"


def test_herald_holds_no_credential(herald_objects: list[dict[str, Any]]) -> None:
    """It forwards each caller's bearer: no key, no Secret, no settings file in its pod."""
    deployment = one(herald_objects, "Deployment", "herald")
    spec = deployment["spec"]["template"]["spec"]
    names = {e["name"] for e in spec["containers"][0]["env"]}
    assert "LOREBASE_KEY" not in names and "LOREBASE_ADMIN_KEY" not in names
    assert "secretKeyRef" not in json.dumps(spec)
    assert [v["name"] for v in spec["volumes"]] == ["tmp"]


def test_herald_runs_locked_down_like_the_others(herald_objects: list[dict[str, Any]]) -> None:
    spec = one(herald_objects, "Deployment", "herald")["spec"]["template"]["spec"]
    keeper = one(herald_objects, "Deployment", "keeper")["spec"]["template"]["spec"]
    assert spec["securityContext"] == keeper["securityContext"]
    assert spec["containers"][0]["securityContext"] == keeper["containers"][0]["securityContext"]
    assert spec["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["automountServiceAccountToken"] is False
    assert one(herald_objects, "PodDisruptionBudget", "herald")["spec"]["maxUnavailable"] == 1


def test_herald_has_a_network_policy_like_the_gateway(herald_objects: list[dict[str, Any]]) -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in find(herald_objects, "NetworkPolicy")}
    herald = policies[f"{RELEASE}-lorebase-herald"]
    assert herald["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "herald"
    assert herald["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"}]}]
    # The release-wide policy selects Herald too: it reaches the gateway as a release pod.
    release = policies[f"{RELEASE}-lorebase"]
    labels = one(herald_objects, "Deployment", "herald")["spec"]["template"]["metadata"]["labels"]
    assert release["podSelector"]["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_herald_objects_are_valid_kubernetes(version: str, herald_objects: list[dict[str, Any]]) -> None:
    for o in herald_objects:
        if o["metadata"]["name"].endswith("-herald"):
            kubernetes_validate.validate(o, version, strict=True)


def test_herald_needs_the_gateway(chart: Any) -> None:
    with pytest.raises(helm.HelmError, match="herald.enabled needs gateway.enabled"):
        render(chart, with_values(REQUIRED, herald__enabled=True, gateway__enabled=False))


def test_an_ingress_path_to_a_disabled_component_fails(chart: Any) -> None:
    hosts = [
        {"host": "mcp.example.com", "paths": [{"path": "/", "pathType": "Prefix", "component": "herald"}]}
    ]
    with pytest.raises(helm.HelmError, match="routes to herald, which is not enabled"):
        render(chart, with_values(REQUIRED, ingress__enabled=True, ingress__hosts=hosts))


# -- the values examples -----------------------------------------------------------------------------


def test_postgres_tls_example_mounts_the_ca_where_asyncpg_reads_it(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["external-postgres-tls"]
    pods = [container_of(objects, "Deployment", name) for name in COMPONENTS]
    pods.append(container_of(objects, "Job", "migrate"))
    for container in pods:
        env = {e["name"]: e for e in container["env"]}
        assert env["PGSSLROOTCERT"]["value"] == "/etc/lorebase/postgres-ca/ca.crt"
        assert env["LOREBASE_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
            "name": "lorebase-connections",
            "key": "database-url",
        }
        assert {
            "name": "postgres-ca",
            "mountPath": "/etc/lorebase/postgres-ca",
            "readOnly": True,
        } in container["volumeMounts"]
    spec = one(objects, "Deployment", "keeper")["spec"]["template"]["spec"]
    volume = next(v for v in spec["volumes"] if v["name"] == "postgres-ca")
    assert volume["secret"] == {
        "secretName": "lorebase-postgres-ca",
        "items": [{"key": "ca.crt", "path": "ca.crt"}],
    }
    # The URL the example's Secret holds: verify-full goes to asyncpg (tests/integration/test_database_tls.py).
    header = (EXAMPLES / "external-postgres-tls.yaml").read_text()
    url = header.split("database-url='")[1].split("'")[0]
    assert engine_target(url)[1] == {"dsn": "postgresql://?sslmode=verify-full"}


def test_a_ca_from_a_configmap_is_mounted_too(chart: Any) -> None:
    values = with_values(
        REQUIRED, database__caCertificate={"secretName": "", "configMapName": "pg-ca", "key": "root.pem"}
    )
    objects = render(chart, values)
    volume = next(
        v
        for v in one(objects, "Job", "migrate")["spec"]["template"]["spec"]["volumes"]
        if v["name"] == "postgres-ca"
    )
    assert volume["configMap"] == {"name": "pg-ca", "items": [{"key": "root.pem", "path": "ca.crt"}]}
    assert "PGSSLROOTCERT" not in json.dumps(render(chart, REQUIRED))  # nothing without a CA


def test_external_nats_example_replicates_the_stream(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    objects = rendered["external-nats"]
    env = {e["name"]: e for e in container_of(objects, "Deployment", "feed")["env"]}
    assert env["LOREBASE_NATS_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "lorebase-nats",
        "key": "nats-url",
    }
    path = tmp_path / "lorebase.yaml"
    path.write_text(one(objects, "ConfigMap", "config")["data"]["lorebase.yaml"])
    assert load_settings({"LOREBASE_CONFIG": str(path)}).get("nats.stream_replicas") == 3


def test_replicas_example_runs_three_of_each_with_budgets(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["replicas-pdb"]
    for name in ("gateway", "keeper", "feed", "herald"):
        assert one(objects, "Deployment", name)["spec"]["replicas"] == 3
        assert one(objects, "PodDisruptionBudget", name)["spec"]["minAvailable"] == 2
    # scribe's jobs are not coordinated across processes yet (values.yaml): one replica, no budget.
    assert one(objects, "Deployment", "scribe")["spec"]["replicas"] == 1
    assert find(objects, "PodDisruptionBudget", "scribe") == []


def test_ingress_example_serves_gateway_and_herald_over_tls(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["ingress-tls"]
    ingress = one(objects, "Ingress", "gateway")
    backends = {
        rule["host"]: rule["http"]["paths"][0]["backend"]["service"]["name"]
        for rule in ingress["spec"]["rules"]
    }
    assert backends == {
        "lorebase.example.com": f"{RELEASE}-lorebase-gateway",
        "mcp.example.com": f"{RELEASE}-lorebase-herald",
    }
    tls_hosts = {host for entry in ingress["spec"]["tls"] for host in entry["hosts"]}
    assert tls_hosts == set(backends)
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    # Through the Service, whose ClientIP affinity keeps an MCP session on its pod.
    assert annotations["nginx.ingress.kubernetes.io/service-upstream"] == "true"
    policies = {p["metadata"]["name"]: p["spec"] for p in find(objects, "NetworkPolicy")}
    for name in ("gateway", "herald"):
        assert policies[f"{RELEASE}-lorebase-{name}"]["ingress"][0]["from"] == [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}
        ]
