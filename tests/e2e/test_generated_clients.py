"""Clients generated from the served /openapi.json, as an integrator makes them, run the agent flow
(resolve, query with coverage, context, dry run, execution on a task branch, the Proposal) against
the session's stack as its agent principal (a service: its write opens a Proposal). The stack trusts
an identity provider, so the document they are made from names its openIdConnect scheme as well:

- Python: openapi-python-client generates `lorebase_api` (no warning, no schema dropped), and
  clients/python/agent_flow.py calls it;
- TypeScript: openapi-typescript writes the types (no warning), clients/typescript/src/agent_flow.ts
  calls the API through openapi-fetch with them, `tsc --strict` compiles it and node runs it
  (clients/typescript has its own package.json and lock: `npm ci` there, as the web app's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import E2E_ISSUER
from tests.e2e.running import Running
from tests.typescript_client import BIN as NODE_BIN
from tests.typescript_client import TYPESCRIPT, ensure_installed

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=400, stdin=subprocess.DEVNULL
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)}\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def served(running: Running, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The document as the stack serves it."""
    path = tmp_path_factory.mktemp("generated") / "openapi.json"
    path.write_bytes(httpx.get(running.url + "/openapi.json", timeout=30, trust_env=False).content)
    # The stack trusts an identity provider: the generators meet its openIdConnect scheme too.
    schemes = json.loads(path.read_text())["components"]["securitySchemes"]
    assert schemes["oidc"]["openIdConnectUrl"] == E2E_ISSUER + "/.well-known/openid-configuration"
    return path


def _check(answer: dict[str, Any]) -> None:
    assert answer["candidates"] >= 1
    assert answer["records"] == ["Supplier/S-1001"]
    assert answer["coverage"]["kinds"][0]["kind"] == "Supplier"
    assert answer["pack"] == "supply" and answer["dry_run"] is True
    assert answer["status"] == "proposed" and answer["proposal"].startswith("prp_")
    assert answer["proposal_status"] == "open"


def test_the_python_client_runs_the_agent_flow(running: Running, served: Path) -> None:
    target = served.parent / "python" / "lorebase_api"
    env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}  # its ruff formats the code
    output = _run(
        [str(BIN / "openapi-python-client"), "generate", "--path", str(served), "--output-path", str(target)]
        + ["--meta", "none"],
        env=env,
    )
    assert "Warning" not in output and "Unable to" not in output, output
    flow = [
        sys.executable,
        str(ROOT / "clients" / "python" / "agent_flow.py"),
        running.url,
        running.agent_key,
    ]
    answer = _run([*flow, "generated-py"], env={**env, "PYTHONPATH": str(target.parent)})
    _check(json.loads(answer.splitlines()[-1]))


def test_the_typescript_client_compiles_strict_and_runs_the_agent_flow(
    running: Running, served: Path
) -> None:
    ensure_installed()  # off the event loop: this test is synchronous
    bin_ = NODE_BIN
    output = _run(
        [
            str(bin_ / "openapi-typescript"),
            str(served),
            "--default-non-nullable",
            "false",
            "-o",
            "src/api.d.ts",
        ],
        cwd=TYPESCRIPT,
    )
    assert "⚠" not in output and "Warning" not in output, output
    _run([str(bin_ / "tsc"), "-p", "tsconfig.json"], cwd=TYPESCRIPT)  # strict: tsconfig.json
    answer = _run(
        ["node", "dist/agent_flow.js", running.url, running.agent_key, "generated-ts"], cwd=TYPESCRIPT
    )
    _check(json.loads(answer.splitlines()[-1]))
