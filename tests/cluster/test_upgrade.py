"""A rolling upgrade from the previous release under load, on the cluster harness (docs/operations.md,
"Upgrades").

The cluster starts on the previous release (deploy/cluster/previous-release, built once by
lorebase.cluster.release) with its schema, under a steady load through HAProxy: writes
(`update_supplier`) and reads (a Record, `/changes`). Then, as `helm upgrade` does: this branch's
`lorebase migrate` (the hook Job: 0016, 0017 and whatever else is newer) while the old pods serve,
then each Deployment rolled one pod at a time (`maxUnavailable: 0`), in an order that has a new
feed beside old keepers and an old feed beside new keepers (ROLL). Old and new pods serve side by
side the whole time. Counted: requests that failed, after the retries a client is told to make (a
503 or a connection refused, retried as Lorebase's own REST client does: after `Retry-After`, else
after an exponential backoff from 0.5 s, up to 5 times; docs/rest.md), and reads whose answer is
not what the writes made. Each failure names the step of the roll it happened in.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import yaml

from lorebase.backoff import exponential
from lorebase.clients.rest.connection import BACKOFF_BASE_S, retry_after_s
from lorebase.cluster import Cluster
from lorebase.cluster.release import previous_commit, previous_release
from lorebase.cluster.values import COMPONENTS
from tests.cluster.conftest import TABLES
from tests.cluster.load import CHANGES, OPERATION

pytestmark = pytest.mark.timeout(600)

RECORD = "/api/v1/domains/supply/kinds/Supplier/records/S-1001"
RETRIES = 5  # a client's retries of a 503 or a refused connection (lorebase.clients.rest.connection)

# The order the replicas are replaced in: Helm rolls the Deployments at once, so a new feed may
# serve beside old keepers (feed-1 first) and an old feed beside new keepers (feed-2 last of them).
ROLL = [
    ("feed", 0),
    ("keeper", 0),
    ("keeper", 1),
    ("feed", 1),
    ("scribe", 0),
    ("scribe", 1),
    ("gateway", 0),
    ("gateway", 1),
]

# What both releases take: the chart's cluster values without the settings the previous release
# does not know (standby reads came after it).
VALUES = {
    "database": {"existingSecret": {"name": "lorebase-connections", "key": "database-url"}},
    "externalNats": {"existingSecret": {"name": "lorebase-connections", "key": "nats-url"}},
    "config": {"nats": {"stream_replicas": 3}},
    **{name: {"replicas": 2} for name in COMPONENTS},
}


@dataclass
class Load:
    """Writes and reads through HAProxy on threads of their own, each retried as a client is told."""

    cluster: Cluster
    requests: int = 0
    retried: int = 0
    failed: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    written: list[tuple[int, str]] = field(default_factory=list)
    step: str = "before the upgrade"  # what the roll is doing, named in each failure
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Load:
        self._threads = [
            threading.Thread(target=self._writes, daemon=True),
            threading.Thread(target=self._reads, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def _call(self, client: httpx.Client, method: str, url: str, **kwargs: object) -> httpx.Response | None:
        for attempt in range(RETRIES + 1):
            self.requests += attempt == 0
            wait = exponential(attempt, BACKOFF_BASE_S, 30.0)  # the client's backoff, without jitter
            try:
                response = client.request(method, url, **kwargs)  # type: ignore[arg-type]
            except httpx.TransportError as error:
                failure = f"{method} {url}: {type(error).__name__}"
            else:
                if response.status_code not in (502, 503):
                    return response
                failure = f"{method} {url}: {response.status_code} {response.text[:200]}"
                wait = retry_after_s(response.headers.get("Retry-After")) or wait
            if attempt < RETRIES:
                self.retried += 1
                time.sleep(wait)
        self._fail(failure)
        return None

    def _fail(self, failure: str) -> None:
        self.failed.append(f"{self.step}: {failure}")

    def _client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.cluster.url, headers=self.cluster.admin, timeout=30, trust_env=False
        )

    def _writes(self) -> None:
        with self._client() as client:
            score = 0
            while not self._stop.is_set():
                score = score % 100 + 1
                body = {"parameters": {"key": "S-1001", "risk_score": score}}
                response = self._call(client, "POST", OPERATION, json=body)
                if response is None:
                    continue
                if response.status_code != 200:
                    self._fail(f"write: {response.status_code} {response.text[:200]}")
                    continue
                self.written.append((score, str(response.json()["revision"])))

    def _reads(self) -> None:
        with self._client() as client:
            since = None
            while not self._stop.is_set():
                if not self.written:
                    time.sleep(0.05)
                    continue
                score, revision = self.written[-1]
                # A read naming the Revision the last write made: as fresh as it, whichever keeper.
                response = self._call(client, "GET", RECORD, params={"at": revision})
                if response is not None:
                    if response.status_code != 200:
                        self._fail(f"read: {response.status_code} {response.text[:200]}")
                    else:
                        record = response.json()
                        if record["values"].get("risk_score") != str(score):  # canonical form
                            self.wrong.append(f"at {revision[:12]}: {record['values']} (wrote {score})")
                # Where the value came from (the stored provenance, whose form 0017 changed).
                lineage = self._call(client, "GET", RECORD + "/lineage", params={"at": revision})
                if lineage is not None:
                    if lineage.status_code != 200:
                        self._fail(f"lineage: {lineage.status_code} {lineage.text[:200]}")
                    elif revision not in str(lineage.json()["attributes"].get("risk_score")):
                        attribute = lineage.json()["attributes"].get("risk_score")
                        self.wrong.append(f"lineage at {revision[:12]}: risk_score {attribute}")
                since = since or revision
                changes = self._call(client, "GET", CHANGES, params={"since": since})
                if changes is not None and changes.status_code != 200:
                    self._fail(f"changes: {changes.status_code} {changes.text[:200]}")
                elif changes is not None:
                    since = changes.json()["next_since"]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def old_cluster() -> Iterator[Cluster]:
    python = previous_release()
    with tempfile.TemporaryDirectory(prefix="lorebase-upgrade-") as directory:
        values = Path(directory) / "values.yaml"
        values.write_text(yaml.safe_dump(VALUES), encoding="utf-8")
        cluster = Cluster(
            Path(directory) / "cluster",
            values=values,
            settings={"LOREBASE_LOGGING__LEVEL": "WARNING"},
            quiet=True,
            python=python,
            several_hosts=False,  # the previous release takes one server in database.url and nats.url
        )
        try:
            cluster.start(example="supply")
            cluster.supervise_in_background()
            yield cluster
        finally:
            cluster.stop()


def test_a_rolling_upgrade_from_the_previous_release(old_cluster: Cluster) -> None:
    cluster = old_cluster
    load = Load(cluster).start()
    steps: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while len(load.written) < 20:
            assert time.monotonic() < deadline, f"no writes on the previous release: {load.failed[:3]}"
            time.sleep(0.1)
        started = time.monotonic()
        load.step = "migrating"
        cluster.migrate(sys.executable)  # the hook Job: the old pods serve on the migrated schema
        steps.append(f"migrated in {time.monotonic() - started:.1f} s")
        for name, index in ROLL:
            # maxUnavailable 0 on one machine: the pod is replaced on its own port, so the other
            # replica serves while this one stops (graceful) and the new one becomes ready.
            begun = time.monotonic()
            load.step = f"replacing {name}-{index + 1}"
            unit = cluster.start_service(name, index, command=[sys.executable, "-m", "lorebase", name])
            port = cluster.ports[name][index]
            while not _listening(port):
                assert unit.poll() is None, f"the new {name}-{index + 1} exited: {unit.tail()}"
                assert time.monotonic() - begun < 120, f"the new {name}-{index + 1} never listened"
                time.sleep(0.1)
            cluster.wait_healthy()
            steps.append(f"{name}-{index + 1} {time.monotonic() - begun:.1f} s")
            load.step = f"after replacing {name}-{index + 1}"
            written = len(load.written)
            while len(load.written) < written + 5:  # traffic on the mixed cluster
                assert time.monotonic() - begun < 180, f"writes stalled: {load.failed[-3:]}"
                time.sleep(0.1)
        rolled = time.monotonic() - started
    finally:
        load.stop()
    table = TABLES.setdefault(
        "rolling upgrade",
        ["| from | requests | retried | failed after retries | wrong answers | took | steps |"],
    )
    table.append(
        f"| {previous_commit()[:12]} | {load.requests} | {load.retried} | {len(load.failed)} "
        f"| {len(load.wrong)} | {rolled:.0f} s | {'; '.join(steps)} |"
    )
    print(table[-1])
    for line in (load.failed + load.wrong)[:10]:
        print(line)
    assert load.failed == [], load.failed[:10]
    assert load.wrong == [], load.wrong[:10]
