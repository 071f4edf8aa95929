"""The `diff` command: what changed between two Revisions of a branch."""

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


def _diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("from_revision", metavar="FROM", help="the earlier Revision")
    parser.add_argument("to_revision", metavar="TO", help="the later Revision")
    branch_at(parser, at=False)


def _diff_human(answer: Any) -> str:
    rows: list[dict[str, Any]] = []
    for entity in ("records", "links"):
        section = answer.get(entity) or {}
        for change in ("added", "removed", "changed"):
            for item in section.get(change, []):
                ref = item.get("ref") or f"{item.get('relation')}: {item.get('from')} -> {item.get('to')}"
                rows.append(
                    {
                        "change": change,
                        "entity": entity[:-1],
                        "ref": ref,
                        "attributes": item.get("attributes"),
                        "after": item.get("after") or item.get("values"),
                    }
                )
    head = f"{short(answer.get('from'))} -> {short(answer.get('to'))} on {answer.get('branch')}"
    return head + "\n" + table(rows, ["change", "entity", "ref", "attributes", "after"], empty="(no changes)")


@client_command("diff", "what changed between two Revisions of a branch", _diff_arguments)
async def _diff(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.diff(**call_arguments("diff", args))
    emit(args, answer, _diff_human)
    return 0
