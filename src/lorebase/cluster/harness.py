"""The cluster harness: the Helm chart's topology on one machine, without Kubernetes.

`Cluster(directory).start()` runs, on loopback ports:

- three nats-servers in one JetStream cluster (lorebase.cluster.nats);
- PostgreSQL: a primary, a synchronous standby `sync1` and an asynchronous one `async1`
  (lorebase.cluster.postgres), the application role and database made as `lorebase up` makes them;
- the services, each as many times as the values file's `replicas` says (lorebase.cluster.values,
  default `deploy/helm/examples/cluster.yaml`: two of each), every process `python -m lorebase
  <service>` with the environment the chart would give its pod: the settings file from `config`,
  the URLs from the "Secrets" (database.url with every PostgreSQL server and
  `target_session_attrs=read-write`, nats.url with every NATS server, the standbys' URLs), gRPC
  addresses listing every replica (`ipv4:a,b`, spread with round_robin as the chart's headless
  Services are);
- HAProxy in front of the gateways (lorebase.cluster.haproxy), the cluster's one address.

A `Supervisor` (lorebase.supervision, as `lorebase up` has) starts again a service or NATS node that
dies, as Kubernetes restarts a pod; PostgreSQL is not restarted (a killed primary is failed over,
never brought back beside the new one). `make cluster` runs it in the foreground (`python -m
lorebase.cluster`); tests/cluster/conftest.py runs one per test module.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import httpx
import yaml

from lorebase.cluster.haproxy import Haproxy
from lorebase.cluster.nats import NatsCluster
from lorebase.cluster.postgres import ReplicatedPostgres
from lorebase.cluster.values import COMPONENTS, DEFAULT_VALUES, ClusterValues
from lorebase.embedded import EmbeddedServerError, free_port, kept_secret, prepare_app_database
from lorebase.embedded.credentials import WEBHOOK_KEY_FILE
from lorebase.supervision import RestartPolicy, ServerProcess, ServiceProcess, Supervisor

DATABASE = "lorebase"
APP_ROLE = "lorebase"
HEALTH_TIMEOUT_S = 120.0


def _app_url(password: str, ports: Sequence[int], *, read_write: bool) -> str:
    hosts = ",".join(f"127.0.0.1:{port}" for port in ports)
    url = f"postgresql://{APP_ROLE}:{quote(password, safe='')}@{hosts}/{DATABASE}"
    return url + ("?target_session_attrs=read-write" if read_write else "")


class Cluster:
    """See the module docstring. `command(name)` is the program line of a service (a rolling upgrade
    gives an older release's); `settings` are more LOREBASE_* variables for every service."""

    def __init__(
        self,
        directory: Path,
        *,
        values: Path = DEFAULT_VALUES,
        settings: dict[str, str] | None = None,
        admin_key: str | None = None,
        quiet: bool = False,
        python: str | Path = sys.executable,
        several_hosts: bool = True,
    ) -> None:
        self.directory = directory
        self.python = str(python)  # the release every service runs (lorebase.cluster.release)
        # database.url and nats.url list every server (v0.9.0 takes one of each: False)
        self.several_hosts = several_hosts
        self.values = ClusterValues.load(values)
        self.settings = dict(settings or {})
        self.quiet = quiet
        self.postgres = ReplicatedPostgres(directory / "postgres")
        self.nats = NatsCluster(directory / "nats")
        self.supervisor = Supervisor(RestartPolicy(backoff_initial_s=0.5, backoff_max_s=5, max_restarts=20))
        self.ports = {name: [free_port() for _ in range(self.values.replicas[name])] for name in COMPONENTS}
        self.haproxy = Haproxy(directory / "haproxy", free_port(), self.ports["gateway"])
        self.admin_key = admin_key or ""
        self.password = ""
        self.env: dict[str, str] = {}
        self.restore_timings: dict[str, float] = {}  # of the last restore(), in seconds
        self._watching: threading.Thread | None = None
        self._stop_watching = threading.Event()
        self._lock = threading.Lock()

    # -- addresses ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The cluster's one address: HAProxy."""
        return self.haproxy.url

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    @property
    def database_url(self) -> str:
        """What database.url is: every server, the read-write one chosen at each connection (or the
        primary alone, for a release before several hosts were taken: `several_hosts=False`)."""
        servers = self.postgres.servers if self.several_hosts else [self.postgres.primary]
        return _app_url(self.password, [s.port for s in servers], read_write=self.several_hosts)

    def server_url(self, name: str) -> str:
        """The application role's URL of one PostgreSQL server (primary, sync1, async1)."""
        return _app_url(self.password, [self.postgres.server(name).port], read_write=False)

    def secrets(self) -> dict[str, str]:
        """The Secrets' contents, as a Helm user would write them for this cluster."""
        standbys = [self.server_url(s.name) for s in self.postgres.servers if s.role == "standby"]
        return {
            "database-url": self.database_url,
            "nats-url": self.nats.url if self.several_hosts else self.nats.nodes[0].url,
            "standby-urls": yaml.safe_dump(standbys, default_flow_style=True, width=100000).strip(),
        }

    def grpc_address(self, name: str) -> str:
        return "ipv4:" + ",".join(f"127.0.0.1:{port}" for port in self.ports[name])

    # -- start and stop ----------------------------------------------------------------------------

    def start(self, *, example: str | None = None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._say(f"starting PostgreSQL (primary, sync1, async1) in {self.directory / 'postgres'}")
        self.postgres.start()
        self.password, _ = kept_secret(self.directory / "postgres-lorebase.password")
        primary = self.postgres.primary.superuser_url
        asyncio.run(prepare_app_database(primary, DATABASE, role=APP_ROLE, password=self.password))
        self._say("starting NATS (three nodes, one JetStream cluster)")
        self.nats.start()
        for node in self.nats.nodes:
            self.supervisor.adopt(ServerProcess(node.name, node))
        if not self.admin_key:
            self.admin_key, _ = kept_secret(self.directory / "admin.key", prefix="lbk_")
        self.env = self._environment()
        self._say("migrating the database")
        self.migrate(self.python)
        for name in COMPONENTS:
            for index in range(len(self.ports[name])):
                self.start_service(name, index)
        self._say(f"starting HAProxy on {self.haproxy.url}")
        self.haproxy.start()
        self.wait_healthy()
        if example:
            from lorebase.examples import load_example

            load_example(example, base_url=self.url, admin_key=self.admin_key)

    def _environment(self) -> dict[str, str]:
        config = self.directory / "lorebase.yaml"
        config.write_text(yaml.safe_dump(self.values.config), encoding="utf-8")
        webhook_key = self.directory / WEBHOOK_KEY_FILE
        kept_secret(webhook_key, prefix="whk_")
        env = {name: value for name, value in os.environ.items() if not name.startswith("LOREBASE_")}
        env.update(
            LOREBASE_CONFIG=str(config),
            LOREBASE_DATA_DIR=str(self.directory / "data"),
            LOREBASE_ADMIN_KEY=self.admin_key,
            LOREBASE_WEBHOOKS__ENCRYPTION_KEY=f"secret://file/{webhook_key}",
            LOREBASE_LOGGING__FORMAT="text",
        )
        env.update(self.values.environment(self.secrets()))
        for name in ("keeper", "feed", "scribe"):
            env[f"LOREBASE_SERVICES__{name.upper()}__ADDRESS"] = self.grpc_address(name)
        env.update(self.settings)
        return env

    def migrate(self, python: str | Path) -> None:
        """`lorebase migrate` of the release whose python is `python`, as the chart's hook Job runs it."""
        result = subprocess.run(
            [str(python), "-m", "lorebase", "migrate"],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise EmbeddedServerError(f"lorebase migrate failed: {result.stderr[-2000:]}")

    def unit_name(self, name: str, index: int) -> str:
        return f"{name}-{index + 1}"

    def start_service(
        self,
        name: str,
        index: int,
        *,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> ServiceProcess:
        """Start replica `index` of service `name` (again, with another program line: an upgrade)."""
        port = self.ports[name][index]
        own = dict(self.env if env is None else env)
        if name == "gateway":
            own["LOREBASE_HTTP_PORT"] = str(port)
        else:
            own[f"LOREBASE_SERVICES__{name.upper()}__LISTEN"] = f"127.0.0.1:{port}"
        unit_name = self.unit_name(name, index)
        program = list(command) if command else [self.python, "-m", "lorebase", name]
        unit = ServiceProcess(unit_name, program, own, lambda: {"process_group": 0}, stop_timeout_s=20)
        with self._lock:
            old = self.service(name, index)
            if old is not None:
                self.supervisor.remove(old)
            self.supervisor.add(unit)
        return unit

    def service(self, name: str, index: int) -> ServiceProcess | None:
        unit_name = self.unit_name(name, index)
        for unit in self.supervisor.units:
            if isinstance(unit, ServiceProcess) and unit.name == unit_name:
                return unit
        return None

    def pid(self, name: str, index: int) -> int:
        unit = self.service(name, index)
        assert unit is not None and unit.process is not None
        return unit.process.pid

    def wait_healthy(self, timeout_s: float = HEALTH_TIMEOUT_S) -> None:
        """Until every gateway, and HAProxy, answer /health with 200."""
        deadline = time.monotonic() + timeout_s
        targets = [f"http://127.0.0.1:{port}/health" for port in self.ports["gateway"]] + [
            f"{self.url}/health"
        ]
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                self.watch(0)
                answers = []
                for target in targets:
                    try:
                        answers.append(client.get(target).status_code)
                    except httpx.HTTPError:
                        answers.append(0)
                if all(code == 200 for code in answers):
                    return
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"the cluster did not become healthy: {answers}")
                self.watch(0.25)

    def watch(self, seconds: float) -> None:
        """Supervise for `seconds` (when no background thread does)."""
        if self._watching is None:
            with self._lock:
                self.supervisor.watch(seconds)
        else:
            time.sleep(seconds)

    def supervise_in_background(self) -> None:
        """Restart what dies from a thread of its own, while a test drives the cluster."""

        def loop() -> None:
            while not self._stop_watching.is_set():
                with self._lock:
                    self.supervisor.watch(0.05)
                time.sleep(0.05)

        self._watching = threading.Thread(target=loop, name="cluster-supervisor", daemon=True)
        self._watching.start()

    def stop(self) -> None:
        self._stop_watching.set()
        if self._watching is not None:
            self._watching.join(10)
            self._watching = None
        self.haproxy.stop()
        with self._lock:
            self.supervisor.stop()
        self.nats.stop()
        self.postgres.stop()

    def stop_services(self) -> None:
        """Stop every replica of every service (the servers go on), as scaling each Deployment to 0."""
        with self._lock:  # the supervising thread must not restart them meanwhile
            units = [unit for unit in self.supervisor.units if isinstance(unit, ServiceProcess)]
            for unit in units:  # every graceful shutdown at once, as a Deployment scaled to 0
                if unit.process is not None and unit.poll() is None:
                    unit.process.terminate()
            for unit in units:
                self.supervisor.remove(unit)

    def start_services(self) -> None:
        """Start every replica of every service with the environment of the servers as they are now
        (after a restore: database.url names the restored server alone), and wait until healthy."""
        self.env = self._environment()
        for name in COMPONENTS:
            for index in range(len(self.ports[name])):
                self.start_service(name, index)
        self.wait_healthy()

    def restore(self, backup: Path, target: str) -> None:
        """A restore to a point in time, as an operator runs one: stop the services, replace the
        PostgreSQL servers by one made from the base backup `backup` and the archived WAL up to the
        restore point `target` (ReplicatedPostgres.restore), start the services on it. NATS keeps
        what it had (the stream is ahead of the restored outbox: lorebase_feed.relay handles it)."""
        self._say(f"restoring PostgreSQL from {backup} to the restore point {target!r}")
        began = time.monotonic()
        self.stop_services()
        stopped = time.monotonic()
        self.postgres.restore(backup, target)
        recovered = time.monotonic()
        self.start_services()
        self.restore_timings = {
            "services stopped": stopped - began,
            "recovered and promoted": recovered - stopped,
            "services healthy": time.monotonic() - recovered,
        }

    def kill(self, name: str, index: int, sig: signal.Signals = signal.SIGKILL) -> int:
        """Send `sig` to replica `index` of service `name`; its pid."""
        pid = self.pid(name, index)
        os.kill(pid, sig)
        return pid

    def _say(self, message: str) -> None:
        if not self.quiet:
            print(f"lorebase cluster: {message}", file=sys.stderr, flush=True)


__all__ = ["Cluster"]
