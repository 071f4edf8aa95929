"""The previous release, built once beside this checkout, for the rolling upgrade of the cluster tests.

`deploy/cluster/previous-release` names the commit of the previous release (v0.9.0: clones without
tags still have the commit). `previous_release()` builds it once into a cache directory keyed by
that commit (`$LOREBASE_RELEASE_CACHE`, default `~/.cache/lorebase/releases/<commit>`): the commit's
files from `git archive` (no worktree is made) installed, not editable, into a venv of their own,
and returns that venv's python. The release's own code is what runs; the libraries it imports are
this checkout's venv's (a `.pth` file names its site-packages), so building takes seconds, not a
download of every dependency: the previous release's pins are a superset of nothing newer than
ours (pyproject.toml only narrowed them since).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from lorebase.cluster.values import ROOT

RELEASE_FILE = ROOT / "deploy" / "cluster" / "previous-release"


def previous_commit() -> str:
    return RELEASE_FILE.read_text(encoding="utf-8").split()[0]


def cache_root() -> Path:
    configured = os.environ.get("LOREBASE_RELEASE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "lorebase" / "releases"


def previous_release(commit: str | None = None) -> Path:
    """The python of the previous release's venv (built on first use, then reused)."""
    commit = commit or previous_commit()
    directory = cache_root() / commit
    python = directory / "venv" / "bin" / "python"
    built = directory / ".built"
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once build it once
        if built.exists() and python.exists():
            _use_our_libraries(python)  # the checkout that built it may be gone
            return python
        shutil.rmtree(directory / "venv", ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="lorebase-release-") as temporary:
            source = Path(temporary) / "source"
            source.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
            subprocess.run([sys.executable, "-m", "venv", str(directory / "venv")], check=True)
            _use_our_libraries(python)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "--no-deps", str(source)],
                check=True,
                capture_output=True,
            )
        built.write_text(commit + "\n", encoding="utf-8")
    return python


def _use_our_libraries(python: Path) -> None:
    """Point the release's venv at this checkout's venv's libraries (a `.pth` file)."""
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(site) / "lorebase-libraries.pth").write_text(ours + "\n", encoding="utf-8")


__all__ = ["RELEASE_FILE", "cache_root", "previous_commit", "previous_release"]
