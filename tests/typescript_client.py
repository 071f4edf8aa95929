"""clients/typescript installed once for the tests that use it (the generated client's agent flow,
the MCP host that signs in with OAuth): `npm ci` when the lock changed, under a file lock, since
pytest-xdist may run both tests at once on two workers."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

TYPESCRIPT = Path(__file__).resolve().parents[1] / "clients" / "typescript"
BIN = TYPESCRIPT / "node_modules" / ".bin"


def ensure_installed() -> None:
    npm = shutil.which("npm")
    assert npm is not None, "node and npm are needed (as for the web app)"
    stamp = TYPESCRIPT / "node_modules" / ".installed"
    with (TYPESCRIPT / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.stat().st_mtime >= (TYPESCRIPT / "package-lock.json").stat().st_mtime:
            return
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=TYPESCRIPT,
            capture_output=True,
            text=True,
            timeout=500,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        stamp.touch()


__all__ = ["BIN", "TYPESCRIPT", "ensure_installed"]
