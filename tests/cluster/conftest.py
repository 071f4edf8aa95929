"""The cluster harness for the tests of docs/operations.md: one cluster per test module.

`make test-cluster` runs these (they are not collected by `make test`: tests/conftest.py); each
module starts `lorebase.cluster.Cluster` from `deploy/helm/examples/cluster.yaml` with the supply
example, plus settings that let Scribe deliver to a receiver on 127.0.0.1 quickly. Every fault's
table row is printed at the end of the run (and kept in `TABLES` for the module that made it).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorebase.cluster import Cluster

# Settings a test cluster adds to the values file's: webhooks to a local receiver, passes every
# half second, short delivery claims, quiet services.
TEST_SETTINGS = {
    "LOREBASE_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
    "LOREBASE_WEBHOOKS__ALLOWED_SCHEMES": "[http, https]",
    "LOREBASE_SCRIBE__WEBHOOKS__INTERVAL_S": "0.5",
    "LOREBASE_WEBHOOKS__PASS_TIMEOUT_S": "5",
    "LOREBASE_WEBHOOKS__TIMEOUT_S": "3",
    "LOREBASE_WEBHOOKS__BACKOFF_INITIAL_S": "0.5",
    "LOREBASE_WEBHOOKS__BACKOFF_MAX_S": "2",
    "LOREBASE_WEBHOOKS__MAX_ATTEMPTS": "100",
    "LOREBASE_LOGGING__LEVEL": "WARNING",
}

TABLES: dict[str, list[str]] = {}


def start_cluster(directory: Path, **options: object) -> Cluster:
    cluster = Cluster(directory, settings=TEST_SETTINGS, quiet=True, **options)  # type: ignore[arg-type]
    try:
        cluster.start(example="supply")
    except BaseException:
        cluster.stop()
        raise
    cluster.supervise_in_background()
    return cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="lorebase-cluster-") as directory:
        running = start_cluster(Path(directory))
        try:
            yield running
        finally:
            running.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, lines in TABLES.items():
        terminalreporter.write_sep("-", title)
        for line in lines:
            terminalreporter.write_line(line)


# nats-py (2.16) drops a socket unclosed when a reconnect attempt is refused after the TCP connect
# (a node restarting answers `Authorization Violation` until it has loaded its accounts):
# `TcpTransport.connect` replaces its writer without closing the old one, and the garbage collector
# warns about it later, in whichever test runs then. The tests' consumers reconnect on their own;
# this one warning of the library is not a failure of ours.
NATS_PY_RECONNECT_LEAK = (
    "ignore:Exception ignored in. <function StreamWriter.__del__:pytest.PytestUnraisableExceptionWarning"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/cluster/" in item.nodeid:
            item.add_marker(pytest.mark.filterwarnings(NATS_PY_RECONNECT_LEAK))
