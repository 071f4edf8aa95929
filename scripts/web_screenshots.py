"""Refresh docs/images/web/ from the browser tests' screenshots.

Runs tests/browser (which need `make web` first) with a known output folder, then copies each
`<test>--<name>.png` the tests saved with `snap("<name>")` to docs/images/web/<name>.png.

    .venv/bin/python scripts/web_screenshots.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images" / "web"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="lorebase-web-shots-") as tmp:
        base = Path(tmp) / "pytest"
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--basetemp={base}",
                "tests/browser",
            ],
            cwd=ROOT,
            check=False,
        )
        shots = sorted(base.glob("screenshots*/*--*.png"))
        IMAGES.mkdir(parents=True, exist_ok=True)
        for shot in shots:
            name = shot.stem.split("--", 1)[1]
            shutil.copyfile(shot, IMAGES / f"{name}.png")
            print(f"{IMAGES.relative_to(ROOT) / (name + '.png')} <- {shot.name}")
        return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
