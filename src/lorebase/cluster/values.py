"""The Helm values the cluster harness runs by: the same file a Helm user installs the chart with.

The harness reads from a values file (default `deploy/helm/examples/cluster.yaml`) what the chart
would make of it: each component's `replicas`, the settings file (`config`), the environment of every
service (`extraEnv`) and where the connection URLs come from (`database.existingSecret`,
`externalNats.existingSecret`, an `extraEnv` entry's `secretKeyRef`). The Secrets' contents are the
harness's own: the URLs of the servers it started, written as a Helm user writes them (several
hosts with `target_session_attrs=read-write`, several NATS servers, a YAML list of standby URLs).
deploy/helm/README.md, "The cluster harness", lists the mapping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_VALUES = ROOT / "deploy" / "helm" / "examples" / "cluster.yaml"
COMPONENTS = ("keeper", "feed", "scribe", "gateway")


@dataclass(frozen=True)
class ClusterValues:
    """What the harness takes from a values file."""

    replicas: dict[str, int]
    config: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)  # extraEnv with plain values
    from_secrets: dict[str, str] = field(default_factory=dict)  # variable -> Secret key

    @classmethod
    def load(cls, path: Path = DEFAULT_VALUES) -> ClusterValues:
        values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        replicas = {name: int((values.get(name) or {}).get("replicas", 1)) for name in COMPONENTS}
        env: dict[str, str] = {}
        from_secrets = {
            "LOREBASE_DATABASE_URL": _secret_key(values.get("database"), "database-url"),
            "LOREBASE_NATS_URL": _secret_key(values.get("externalNats"), "nats-url"),
        }
        for item in values.get("extraEnv") or []:
            reference = ((item.get("valueFrom") or {}).get("secretKeyRef") or {}).get("key")
            if reference:
                from_secrets[item["name"]] = reference
            else:
                env[item["name"]] = str(item.get("value", ""))
        return cls(replicas, dict(values.get("config") or {}), env, from_secrets)

    def environment(self, secrets: dict[str, str]) -> dict[str, str]:
        """The variables every service gets: extraEnv, and the Secrets' values where they are named."""
        env = dict(self.env)
        for variable, key in self.from_secrets.items():
            if key not in secrets:
                raise KeyError(f"the values name the Secret key {key!r}, which the harness does not make")
            env[variable] = secrets[key]
        return env


def _secret_key(section: dict[str, Any] | None, default: str) -> str:
    existing = (section or {}).get("existingSecret") or {}
    return str(existing.get("key") or default)


__all__ = ["COMPONENTS", "DEFAULT_VALUES", "ClusterValues"]
