"""What the read commands share: a KIND/KEY argument (`record_ref`), the --branch and --at
arguments (`branch_at`) and a Record's values on one line (`values_text`).
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.commands._runtime import (
    Usage,
    cell,
)


def record_ref(text: str) -> str:
    kind, slash, key = text.partition("/")
    if not slash or not kind or not key:
        raise Usage(f"{text!r} is not a reference: write KIND/KEY, as in Supplier/S-1001")
    return text


def branch_at(parser: argparse.ArgumentParser, *, at: bool = True) -> None:
    parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    if at:
        parser.add_argument(
            "--at", default="", metavar="REV", help="as of this Revision (or a prefix of 12+)"
        )


def values_text(values: Any) -> str:
    if not isinstance(values, dict):
        return ""
    return "; ".join(f"{name}={cell(value, 40)}" for name, value in values.items())
