"""The commands that walk the graph: `links` (a Record's Links along a Relation), `neighborhood`
(the graph around some Records) and `traverse` (the Records at the end of a path of Relations).
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    Usage,
    call_arguments,
    cell,
    client_command,
    csv_list,
    emit,
    table,
)
from lorebase.commands.reads._common import branch_at, record_ref


def _links_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", metavar="KIND")
    parser.add_argument("key", metavar="KEY")
    parser.add_argument("relation", metavar="RELATION", help="a Relation's name or its inverse name")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--cursor", default="")
    branch_at(parser)


@client_command("links", "the Links of a Record along a Relation", _links_arguments)
async def _links(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.get_links(**call_arguments("get_links", args))
    emit(args, answer, lambda a: table(a.get("links", []), ["from", "to", "values"]))
    return 0


def _walk_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("refs", nargs="+", metavar="KIND/KEY", help="the start Records")
    parser.add_argument("--depth", type=int, help="neighborhood: how many hops")
    parser.add_argument("--relations", help="neighborhood: Relation names to follow, comma-separated")
    parser.add_argument("--path", help="traverse: the Relations to follow in order, comma-separated")
    parser.add_argument("--headers", action="store_true", help="neighborhood: no values")
    branch_at(parser)


def _walk_human(answer: Any) -> str:
    records = answer.get("records") or answer.get("results") or []
    return table(records, ["ref", "title", "depth"]) if isinstance(records, list) else cell(answer, 400)


@client_command("neighborhood", "the graph around some Records (POST /neighborhood)", _walk_arguments)
async def _neighborhood(client: RestClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"refs": [record_ref(r) for r in args.refs], "values": not args.headers}
    for member, value in (
        ("depth", args.depth),
        ("relations", csv_list(args.relations) or None),
        ("branch", args.branch),
        ("at", args.at),
    ):
        if value not in (None, ""):
            body[member] = value
    emit(args, await client.neighborhood(domain=args.domain, body=body), _walk_human)
    return 0


@client_command("traverse", "the Records at the end of a path of Relations (POST /traverse)", _walk_arguments)
async def _traverse(client: RestClient, args: argparse.Namespace) -> int:
    if not args.path:
        raise Usage("--path is required: the Relations to follow, comma-separated")
    body: dict[str, Any] = {"from": [record_ref(r) for r in args.refs], "path": csv_list(args.path)}
    for member, value in (("branch", args.branch), ("at", args.at)):
        if value:
            body[member] = value
    emit(args, await client.traverse(domain=args.domain, body=body), _walk_human)
    return 0
