"""`lorebase herald`: the MCP server (docs/herald.md). The `mcp` SDK is imported only when it runs;
the arguments and the run are lorebase.herald.cli's, which `lorebasehq-herald` (the light
distribution, clients/herald) shares."""

from __future__ import annotations

import argparse

from lorebase.config import Settings
from lorebase.herald.cli import add_arguments, run
from lorebase.subcommands import command


@command(
    "herald",
    "the MCP server: Lorebase's reads and Operation writes as tools for agents (stdio or HTTP)",
    add_arguments,
    needs_settings=False,
)
def _herald(args: argparse.Namespace, settings: Settings) -> int:
    return run(args)
