"""The commands that find Records: `search` (by text), `query` (a query document, docs/query.md) and
`resolve` (which Kinds, Attributes and values the words of a question mean).
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    client_command,
    emit,
    json_object_argument,
    table,
)
from lorebase.commands.reads._common import branch_at, values_text


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the words to look for")
    parser.add_argument("--kind", action="append", help="search this Kind (repeat for several)")
    parser.add_argument("--trait", action="append", help="search the Kinds implementing this Trait")
    parser.add_argument("--lens", help="search the Kinds of this lens (unless --kind or --trait)")
    parser.add_argument("--limit", type=int, help="at most this many results")
    branch_at(parser, at=False)


@client_command("search", "Records by text, by Kind, Trait or lens", _search_arguments)
async def _search(client: RestClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"text": args.text}
    for member, value in (
        ("kinds", args.kind),
        ("traits", args.trait),
        ("lens", args.lens),
        ("limit", args.limit),
        ("branch", args.branch),
    ):
        if value not in (None, ""):
            body[member] = value
    answer = await client.search(domain=args.domain, body=body)
    emit(args, answer, lambda a: table(a.get("results", []), ["ref", "title", "score"]))
    return 0


def _query_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "filter",
        metavar="QUERY",
        help='the query document (docs/query.md) as JSON, @FILE, a file name or - for stdin: {"kind": ...}',
    )
    branch_at(parser)


def _query_human(answer: Any) -> str:
    aggregate = answer.get("aggregate")
    if aggregate is not None:
        if "groups" in aggregate:
            grouped = table(aggregate["groups"], ["value", "count"])
            return f"{grouped}\n\ncount: {aggregate.get('count')}"
        return f"count: {aggregate.get('count')}"
    rows = [{**r, "values": values_text(r.get("values"))} for r in answer.get("records", [])]
    lines = [table(rows, ["ref", "title", "values"]), "", f"count: {answer.get('count')}"]
    if answer.get("next_cursor"):
        lines.append(f'more: add "cursor": "{answer["next_cursor"]}" to the query')
    notes = (answer.get("coverage") or {}).get("notes") or []
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


@client_command("query", "Records matching a query document (POST /query)", _query_arguments)
async def _query(client: RestClient, args: argparse.Namespace) -> int:
    body = json_object_argument(args.filter, "the query")
    if args.branch:
        body["branch"] = args.branch
    if args.at:
        body["at"] = args.at
    emit(args, await client.query(domain=args.domain, body=body), _query_human)
    return 0


def _resolve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the words of a question")
    parser.add_argument("--kind", action="append", help="only this Kind (repeat for several)")
    parser.add_argument("--keep-misses", action="store_true", help="let Scribe learn from unmatched words")
    branch_at(parser)


def _resolve_human(answer: Any) -> str:
    rows = [
        {**c, "predicate": c.get("predicate"), "target": f"{c.get('target')}"}
        for c in answer.get("candidates", [])
    ]
    text = table(
        rows, ["target", "kind", "relation", "attribute", "refs", "level", "score", "matched", "predicate"]
    )
    if answer.get("hints"):
        shown = [
            f"{h['hint']} ({h['matched']}): {h.get('aggregate') or h.get('order_by')}"
            for h in answer["hints"]
        ]
        text += "\n\nhints: " + "; ".join(shown)
    if answer.get("unmatched"):
        text += f"\n\nunmatched: {', '.join(answer['unmatched'])}"
    return text


@client_command(
    "resolve", "which Kinds, Attributes and values the words of a question mean", _resolve_arguments
)
async def _resolve(client: RestClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"text": args.text, "record_misses": bool(args.keep_misses)}
    for member, value in (("kinds", args.kind), ("branch", args.branch), ("at", args.at)):
        if value:
            body[member] = value
    emit(args, await client.resolve(domain=args.domain, body=body), _resolve_human)
    return 0
