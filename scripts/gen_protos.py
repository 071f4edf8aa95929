"""Regenerate the Python gRPC code of protos/ into src/lorebase/v1 (never edited by hand).

`python scripts/gen_protos.py` writes the files; `--out DIR` writes them under DIR instead, so a
test can compare a fresh generation with what is committed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
HEADER = "# Generated from protos/ by scripts/gen_protos.py. Do not edit.\n"


def generate(out_root: Path) -> list[Path]:
    out_root.mkdir(parents=True, exist_ok=True)
    sources = sorted(PROTOS.glob("lorebase/v1/*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *[str(source) for source in sources],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    package = out_root / "lorebase" / "v1"
    written = []
    for path in sorted(package.glob("*_pb2*.py*")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith(HEADER):
            path.write_text(HEADER + text, encoding="utf-8")
        written.append(path)
    init = package / "__init__.py"
    init.write_text(HEADER + '"""Generated gRPC code of protos/lorebase/v1."""\n', encoding="utf-8")
    written.append(init)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "src", help="root the lorebase/v1 package goes under"
    )
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path.relative_to(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
