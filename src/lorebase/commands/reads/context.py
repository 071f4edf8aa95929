"""The `context` command: a context pack (seed Records, their neighborhood, schema and changes),
as a table, as Markdown for a prompt, or as JSON.
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    cell,
    client_command,
    csv_list,
    emit,
    json_object_argument,
    short,
    table,
)
from lorebase.commands.reads._common import branch_at, record_ref, values_text


def _context_arguments(parser: argparse.ArgumentParser) -> None:
    seeds = parser.add_mutually_exclusive_group(required=True)
    seeds.add_argument("--refs", help="seed Records: KIND/KEY[,KIND/KEY...]")
    seeds.add_argument("--search", metavar="TEXT", help="seed Records found by this text")
    seeds.add_argument("--query", metavar="JSON", help="seed Records of a query (JSON, @FILE or -)")
    parser.add_argument("--lens", help="a lens of the schema (its Kinds, Relations, depth and budget)")
    parser.add_argument("--trait", action="append", help="limit neighbors and seeds to a Trait's Kinds")
    parser.add_argument("--relations", help="Relation names to follow, comma-separated")
    parser.add_argument("--depth", type=int, help="neighborhood depth (0: the seeds alone)")
    parser.add_argument("--budget", type=int, metavar="TOKENS", help="estimated token budget")
    parser.add_argument("--since", help="recent changes after this Revision")
    parser.add_argument("--markdown", action="store_true", help="print the Markdown pack (for a prompt)")
    branch_at(parser, at=False)


def _context_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if args.refs:
        body["refs"] = [record_ref(ref) for ref in csv_list(args.refs)]
    elif args.search:
        body["search"] = args.search
    else:
        body["query"] = json_object_argument(args.query, "--query")
    for member, value in (
        ("lens", args.lens),
        ("traits", args.trait),
        ("relations", csv_list(args.relations) or None),
        ("depth", args.depth),
        ("budget_tokens", args.budget),
        ("since", args.since),
        ("branch", args.branch),
    ):
        if value not in (None, ""):
            body[member] = value
    return body


def _context_human(pack: Any) -> str:
    budget = pack.get("budget") or {}
    head = (
        f"Context: {pack.get('domain')}/{pack.get('branch')} at {short(pack.get('revision'))}; "
        f"{budget.get('used_tokens')} of {budget.get('limit_tokens')} tokens"
    )
    if budget.get("trimmed"):
        head += f"; trimmed: {cell(budget['trimmed'])}"
    seeds = table(
        [{**s, "values": values_text(s.get("values"))} for s in pack.get("seeds", [])],
        ["ref", "title", "values"],
    )
    neighbors = table(
        [{**n, "values": values_text(n.get("values"))} for n in pack.get("neighbors", [])],
        ["ref", "title", "depth", "values"],
    )
    links = sum(len(v) for v in (pack.get("links") or {}).values())
    return (
        f"{head}\n\nSeeds\n{seeds}\n\nNeighbors\n{neighbors}\n\nLinks: {links} (--markdown or --json for all)"
    )


@client_command(
    "context", "a context pack: seed Records, their neighborhood, schema and changes", _context_arguments
)
async def _context(client: RestClient, args: argparse.Namespace) -> int:
    body = _context_body(args)
    if args.markdown and not args.json:
        print(await client.context(domain=args.domain, body={**body, "format": "markdown"}))
        return 0
    emit(args, await client.context(domain=args.domain, body=body), _context_human)
    return 0
