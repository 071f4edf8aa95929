"""The `health` command: the health of the data (violations, duplicates, orphans, gaps), of a
Domain's branch or of one Kind, as a table, Markdown or JSON.
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    call_arguments,
    client_command,
    emit,
    short,
    table,
)
from lorebase.commands.reads._common import branch_at


def _health_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", nargs="?", metavar="KIND", help="one Kind only")
    parser.add_argument("--markdown", action="store_true", help="the Markdown report")
    branch_at(parser)


def _health_human(report: Any) -> str:
    summary = report.get("summary") or {}
    state = "ok" if summary.get("ok") else "needs attention"
    head = f"Health of {report.get('domain')} on {report.get('branch')} at {short(report.get('revision'))}: {state}"
    counts = ", ".join(f"{k} {v}" for k, v in summary.items() if k != "ok")
    kinds = table(
        [{**k, "last_change": short(k.get("last_change"))} for k in report.get("kinds", [])],
        ["kind", "records", "invalid", "duplicate_groups", "last_change"],
    )
    relations = table(report.get("relations", []), ["relation", "links", "orphans", "gaps"])
    return f"{head}\n{counts}\n\nKinds\n{kinds}\n\nRelations\n{relations}"


@client_command("health", "the health of the data: violations, duplicates, orphans, gaps", _health_arguments)
async def _health(client: RestClient, args: argparse.Namespace) -> int:
    markdown = args.markdown and not args.json
    form = "markdown" if markdown else ""
    if args.kind:
        answer = await client.get_kind_health(**call_arguments("get_kind_health", args, format=form))
    else:
        answer = await client.get_health(**call_arguments("get_health", args, format=form))
    if markdown:
        print(answer)
    else:
        emit(args, answer, _health_human)
    return 0
