"""The cluster harness: the Helm chart's topology on one machine (lorebase.cluster.harness).

`make cluster` runs it in the foreground (`python -m lorebase.cluster`); tests/cluster runs the
faults, restores and upgrades of docs/operations.md against it.
"""

from __future__ import annotations

from lorebase.cluster.harness import Cluster
from lorebase.cluster.nats import NatsCluster, NatsNode
from lorebase.cluster.postgres import ASYNC, SYNC, ReplicatedPostgres
from lorebase.cluster.values import DEFAULT_VALUES, ClusterValues

__all__ = [
    "ASYNC",
    "DEFAULT_VALUES",
    "SYNC",
    "Cluster",
    "ClusterValues",
    "NatsCluster",
    "NatsNode",
    "ReplicatedPostgres",
]
