"""A NATS cluster on one machine: `nodes` nats-server processes with JetStream, routed to each other.

Each node listens for clients, routes and monitoring on loopback ports of its own, keeps its
JetStream store in `<dir>/nats-<n>/`, fsyncs every write (`sync_interval: always`, as the embedded
server and `deploy/helm/nats-values.yaml` do) and asks clients for the cluster's token. A stream
created with `nats.stream_replicas: 3` is then kept on three nodes, with a leader elected by
JetStream's Raft: the faults of the cluster tests kill (SIGKILL) or pause (SIGSTOP) a node, or the
stream's leader, and start it again on the same ports and store.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorebase.embedded import EmbeddedServerError, free_port, kept_secret, nats_server_binary, owned_child
from lorebase.embedded._process import _log_tail, _open_log, _stop_process
from lorebase.embedded.credentials import write_private

CLUSTER_NAME = "lorebase"
_CONFIG = """\
# Written by lorebase.cluster on every start of this node.
server_name: %(name)s
listen: 127.0.0.1:%(port)d
http: 127.0.0.1:%(http_port)d
jetstream {
  store_dir: "%(store)s"
  sync_interval: always
}
authorization {
  token: "%(token)s"
}
cluster {
  name: %(cluster)s
  listen: 127.0.0.1:%(route_port)d
  routes: [%(routes)s]
}
"""


@dataclass(frozen=True)
class RaftView:
    """One node's view of a Raft group (its `/raftz`): its own state, the term, the leader it names."""

    state: str  # LEADER, FOLLOWER, CANDIDATE
    term: int
    leader: str | None  # a node's name


class NatsNode:
    """One nats-server of the cluster; `start()` after a stop or a kill comes back on the same ports
    and store, so clients and the other nodes find it where it was."""

    def __init__(self, directory: Path, name: str, token: str, ports: tuple[int, int, int]) -> None:
        self.directory = directory
        self.name = name
        self.token = token
        self.port, self.route_port, self.http_port = ports
        self.log_path = directory / "nats.log"
        self.config_path = directory / "nats.conf"
        self.routes: list[int] = []
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.token}@127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def poll(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def start(self) -> str:
        if self._process is not None and self._process.poll() is None:
            return self.url
        self.directory.mkdir(parents=True, exist_ok=True)
        routes = ", ".join(f"nats-route://127.0.0.1:{port}" for port in self.routes)
        values = {
            "name": self.name,
            "port": self.port,
            "http_port": self.http_port,
            "route_port": self.route_port,
            "store": self.directory / "jetstream",
            "token": self.token,
            "cluster": CLUSTER_NAME,
            "routes": routes,
        }
        write_private(self.config_path, _CONFIG % values)
        log = _open_log(self.log_path)
        try:
            self._process = subprocess.Popen(
                [str(nats_server_binary()), "-c", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                **owned_child(signal.SIGTERM),
            )
        finally:
            os.close(log)
        return self.url

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGCONT)  # a paused node cannot act on SIGTERM
            _stop_process(process, signal.SIGTERM, 10.0)

    def signal(self, sig: signal.Signals) -> None:
        """Send `sig` (SIGKILL, SIGSTOP, SIGCONT) to the running node."""
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, sig)

    def monitor(self, path: str, timeout_s: float = 2.0) -> dict[str, Any]:
        """A monitoring endpoint's JSON answer (`/jsz`, `/healthz`, ...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=timeout_s) as answer:
            return dict(json.loads(answer.read()))

    def healthy(self) -> bool:
        """JetStream on this node is up and current with the cluster (`/healthz`)."""
        try:
            return self.monitor("/healthz").get("status") == "ok"
        except (OSError, ValueError):
            return False


class NatsCluster:
    """`nodes` routed nats-servers sharing one token (kept in `<dir>/nats.token`)."""

    def __init__(self, directory: Path, nodes: int = 3) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        token, _ = kept_secret(directory / "nats.token")
        self.nodes = [
            NatsNode(
                directory / f"nats-{index}", f"nats-{index}", token, (free_port(), free_port(), free_port())
            )
            for index in range(1, nodes + 1)
        ]
        for node in self.nodes:
            node.routes = [other.route_port for other in self.nodes if other is not node]

    @property
    def url(self) -> str:
        """Every node, comma separated, as nats.url lists a cluster (lorebase_feed.relay.nats_servers)."""
        return ",".join(node.url for node in self.nodes)

    def start(self, timeout_s: float = 60.0) -> None:
        for node in self.nodes:
            node.start()
        self.wait_healthy(timeout_s)

    def wait_healthy(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not all(node.healthy() for node in self.nodes):
            for node in self.nodes:
                if node.poll() is not None:
                    raise EmbeddedServerError(f"{node.name} exited:\n{_log_tail(node.log_path)}")
            if time.monotonic() > deadline:
                tails = "\n".join(f"{n.name}: {_log_tail(n.log_path, 5)}" for n in self.nodes)
                raise EmbeddedServerError(f"the NATS cluster did not become healthy:\n{tails}")
            time.sleep(0.1)

    def raft_group(self, stream: str) -> str | None:
        """The name of `stream`'s Raft group, as a running node reports it."""
        for node in self.nodes:
            if node.poll() is not None:
                continue
            try:
                info = node.monitor("/jsz?streams=true&acc=$G")
            except (OSError, ValueError):
                continue
            for account in info.get("account_details", []) or []:
                for detail in account.get("stream_detail", []) or []:
                    if detail.get("name") == stream:
                        group = (detail.get("cluster") or {}).get("raft_group")
                        if group:
                            return str(group)
        return None

    def stream_views(self, stream: str) -> dict[str, RaftView | None]:
        """Each node's Raft state for `stream` (None: it did not answer)."""
        group = self.raft_group(stream)
        answers: dict[str, dict[str, Any] | None] = {}
        for node in self.nodes:
            answers[node.name] = None
            if group is None or node.poll() is not None:
                continue
            try:
                accounts = node.monitor(f"/raftz?acc=$G&group={group}")
            except (OSError, ValueError):
                continue
            answers[node.name] = ((accounts or {}).get("$G") or {}).get(group)
        names = {str(a["id"]): name for name, a in answers.items() if a and a.get("id")}
        return {
            name: None
            if answer is None
            else RaftView(
                str(answer.get("state")), int(answer.get("term") or 0), names.get(str(answer.get("leader")))
            )
            for name, answer in answers.items()
        }

    def stream_election(self, stream: str) -> tuple[NatsNode, int] | None:
        """`stream`'s leader and its Raft term, once every node names that leader in that term and
        the leader says it leads; None meanwhile. For seconds after a leader dies its followers still
        name it (until the election), and a leader killed and restarted names itself for a moment,
        in its old term: an election after a fault is a term above the one before it."""
        views = self.stream_views(stream)
        if any(view is None for view in views.values()):
            return None
        agreed = {(view.leader, view.term) for view in views.values() if view is not None}
        if len(agreed) != 1:
            return None
        leader, term = agreed.pop()
        node = next((n for n in self.nodes if n.name == leader), None)
        if (
            node is None
            or node.poll() is not None
            or (views[node.name] or RaftView("", 0, None)).state != "LEADER"
        ):
            return None
        return node, term

    def stream_leader(self, stream: str) -> NatsNode | None:
        """The node that leads `stream` now (stream_election), or None while that is not settled."""
        elected = self.stream_election(stream)
        return None if elected is None else elected[0]

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()


__all__ = ["NatsCluster", "NatsNode", "RaftView"]
