"""The web app's API types (web/src/api/openapi.d.ts) are generated from the OpenAPI document the
gateway serves (lorebase.contract.openapi.document(), which /openapi.json answers byte for byte) by
openapi-typescript: a contract change without `make docs` leaves them stale, and this fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.typescript_client import ensure_installed

ROOT = Path(__file__).resolve().parents[2]


def test_the_web_apps_api_types_are_generated_from_the_served_document() -> None:
    ensure_installed()  # openapi-typescript lives in clients/typescript (TypeScript 5)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_web_types.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=400,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
