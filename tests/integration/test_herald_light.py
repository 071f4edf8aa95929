"""The packages: the light Herald distribution (clients/herald, `lorebasehq-herald`) is built by
`uv build` from the same source as the full one (an sdist that carries the code, and the wheel built
from it; `pip wheel` of the sdist too), installed in a fresh venv with the oldest MCP SDK it
declares, and started over stdio by the MCP SDK's own client against the test stack's gateway (a
real uvicorn): a tool call answers the stack's data, and the venv holds none of the services'
dependencies. `pipx install` of the built Herald wheel and of the full distribution's (`lorebase`,
the CLI) works in a pipx home of the test's own, and the CLI's venv has no build-time tool
(grpcio-tools).

It needs PyPI (or the configured index) for the venv's packages; pip's cache makes a second run
take about 20 s."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.integration.conftest import ADMIN_KEY, Stack
from tests.integration.gateway_server import serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "clients" / "herald"
BIN = Path(sys.executable).parent  # uv and pipx, dev dependencies


def lower_bound(requirement: str) -> str:
    """The `>=` version of a requirement such as `mcp>=1.10,<3`."""
    found = re.search(r">=\s*([0-9][0-9.]*)", requirement)
    assert found is not None, requirement
    return found.group(1)


def oldest() -> list[str]:
    """The oldest MCP packages the distribution declares, pinned (mcp, and mcp-types if declared).
    LOREBASE_TEST_HERALD_MCP (e.g. `mcp==1.30.0`, space-separated) checks other versions instead."""
    if os.environ.get("LOREBASE_TEST_HERALD_MCP"):
        return os.environ["LOREBASE_TEST_HERALD_MCP"].split()
    dependencies = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = []
    for requirement in dependencies:
        name = re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0]
        if name in ("mcp", "mcp-types"):
            pins.append(f"{name}=={lower_bound(requirement)}")
    assert any(pin.startswith("mcp==") for pin in pins)
    if any(pin.startswith("mcp==1.") for pin in pins):
        # mcp 1.10 imports a pydantic internal (eval_type_backport) that pydantic 2.12 no longer
        # has: the SDK with a pydantic of its time, as an environment on it would have.
        pins.append("pydantic<2.12")
    return pins


@dataclass(frozen=True)
class Light:
    venv: Path
    wheel: Path
    sdist: Path
    tree: Path  # the copy of the repository the artifacts were built from

    @property
    def herald(self) -> Path:
        return self.venv / "bin" / "lorebasehq-herald"

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60
        )


def run(command: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _tree(directory: Path) -> Path:
    """A copy of what the builds read (a build writes its egg-info beside the sources)."""
    tree = directory / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for part in ("src", "services", "config", "clients/herald"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, tree / name)
    return tree


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Light]:
    """The sdist and wheel `uv build` makes (the wheel from the sdist, so the sdist must carry the
    code), installed with the oldest supported MCP SDK in a new venv."""
    directory = tmp_path_factory.mktemp("herald-light")
    tree = _tree(directory)
    dist = directory / "dist"
    run([str(BIN / "uv"), "build", "--quiet", "-o", str(dist), str(tree / "clients" / "herald")])
    (wheel,) = dist.glob("lorebasehq_herald-*.whl")
    (sdist,) = dist.glob("lorebasehq_herald-*.tar.gz")
    # A venv without pip of its own (ensurepip takes seconds): this environment's pip installs into
    # it (`--python`), resolving the wheel's dependencies from the index as for a user; no .pyc is
    # compiled ahead, Python compiles what Herald imports as it starts.
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    venv = directory / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    run(
        [
            *pip,
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-compile",
            str(wheel),
            *oldest(),
        ]
    )
    yield Light(venv, wheel, sdist, tree)


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_the_wheel_holds_herald_and_not_the_services(light: Light) -> None:
    import tarfile
    import zipfile

    in_sdist = [name.split("/", 1)[1] for name in tarfile.open(light.sdist).getnames() if "/" in name]
    assert "src/lorebase/herald/server.py" in in_sdist and "src/lorebase/clients/rest/client.py" in in_sdist
    names = zipfile.ZipFile(light.wheel).namelist()
    assert "lorebase/herald/server.py" in names and "lorebase/clients/rest/client.py" in names
    assert not [
        n for n in names if n.startswith(("lorebase/clients/keeper", "lorebase_keeper", "lorebase/cli.py"))
    ]
    # The venv has the oldest MCP SDK declared, and none of the services' dependencies.
    versions = light.python(
        "import importlib.metadata as m, json; "
        "print(json.dumps({n: m.version(n) for n in ('mcp', 'lorebasehq-herald')}))"
    )
    assert versions.returncode == 0, versions.stderr
    installed = json.loads(versions.stdout)
    assert f"mcp=={installed['mcp']}" in oldest()  # the oldest mcp declared (or the one asked for)
    for absent in ("grpc", "sqlalchemy", "nats", "asyncpg", "yaml"):
        assert light.python(f"import {absent}").returncode != 0, f"{absent} is installed"
    assert (
        "LOREBASE_KEY"
        in subprocess.run([str(light.herald), "--help"], capture_output=True, text=True, timeout=60).stdout
    )


async def test_lorebase_herald_over_stdio_answers_a_tool_call(supply: Stack, light: Light) -> None:
    async with serving(supply.gateway) as served:
        env = {"LOREBASE_URL": served.url, "LOREBASE_KEY": ADMIN_KEY, "PATH": "/usr/bin:/bin"}
        async with Client(StdioServerParameters(command=str(light.herald), args=[], env=env)) as herald:
            tools = {tool.name for tool in (await herald.list_tools()).tools}
            assert {"lorebase_context", "lorebase_record", "lorebase_execute"} <= tools
            pack = await herald.call_tool(
                "lorebase_context", {"refs": ["Supplier/S-1001"], "lens": "supplier_risk"}
            )
            assert not pack.is_error, _text(pack)
            assert _text(pack).startswith("# Context: supply/main")
            assert "Kavsen Alloys Sp. z o.o." in _text(pack)
            missing = await herald.call_tool("lorebase_record", {"kind": "Supplier", "key": "S-9999"})
            assert missing.is_error and "Not found" in _text(missing)


def test_pip_wheel_builds_from_the_sdist(light: Light, tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(light.sdist)])
    (wheel,) = tmp_path.glob("lorebasehq_herald-*.whl")
    assert "lorebase/herald/tools/__init__.py" in __import__("zipfile").ZipFile(wheel).namelist()


def test_pipx_installs_the_built_herald_and_cli(light: Light, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run([str(BIN / "uv"), "build", "--wheel", "--quiet", "-o", str(dist), str(light.tree)])
    (cli,) = dist.glob("lorebase-*.whl")
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    for artifact in (light.wheel, cli):
        done = subprocess.run(
            [str(BIN / "pipx"), "install", "--python", sys.executable, str(artifact)],
            env=env,
            capture_output=True,
            text=True,
            timeout=500,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for command in ("lorebasehq-herald", "lorebase"):
        shown = subprocess.run([str(tmp_path / "bin" / command), "--help"], capture_output=True, text=True)
        assert shown.returncode == 0 and "usage:" in shown.stdout, shown.stderr
    python = tmp_path / "pipx" / "venvs" / "lorebase" / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import grpc_tools"], capture_output=True).returncode != 0
