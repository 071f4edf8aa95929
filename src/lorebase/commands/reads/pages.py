"""The paged listings, each page with a cursor to the next: `revision` (one Revision and its
changes), `records` (a Kind's Records in key order) and `relation-links` (a Relation's Links).
"""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    call_arguments,
    client_command,
    emit,
    fields,
    table,
)
from lorebase.commands.reads._common import branch_at


def _revision_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("revision", metavar="REV", help="a Revision id, a prefix of 12+, or a tag")
    parser.add_argument("--limit", type=int, default=0, help="changes per page")
    parser.add_argument("--cursor", default="", help="the next_cursor of the previous page")
    branch_at(parser, at=False)


def _revision_human(answer: Any) -> str:
    revision = answer.get("revision") or {}
    lines = [
        fields(
            [
                ("revision", revision.get("id")),
                ("author", revision.get("author")),
                ("message", revision.get("message")),
                ("origin", revision.get("origin")),
                ("schema version", revision.get("schema_version")),
                ("schema changed", answer.get("schema")),
            ]
        ),
        table(
            answer.get("changes", []), ["entity", "name", "key", "change", "attributes"], empty="(no changes)"
        ),
    ]
    if answer.get("next_cursor"):
        lines.append(f"more: --cursor {answer['next_cursor']}")
    return "\n".join(lines)


@client_command("revision", "one Revision and its changes (Records, Links, schema)", _revision_arguments)
async def _revision(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.get_revision(**call_arguments("get_revision", args))
    emit(args, answer, _revision_human)
    return 0


# -- records, relation-links ------------------------------------------------------------------------


def _listing_arguments(what: str) -> Any:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(what.lower(), metavar=what.upper(), help=f"a {what} of the schema")
        parser.add_argument("--limit", type=int, default=0, help="per page")
        parser.add_argument("--cursor", default="", help="the next_cursor of the previous page")
        branch_at(parser)

    return arguments


def _more(answer: Any) -> str:
    return f"\nmore: --cursor {answer['next_cursor']}" if answer.get("next_cursor") else ""


@client_command("records", "a page of a Kind's Records, in key order", _listing_arguments("Kind"))
async def _records(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.list_records(**call_arguments("list_records", args))
    emit(
        args,
        answer,
        lambda a: table(a.get("records", []), ["key", "title"], empty="(no Records)") + _more(a),
    )
    return 0


@client_command("relation-links", "a page of a Relation's Links", _listing_arguments("Relation"))
async def _relation_links(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.list_links(**call_arguments("list_links", args))
    emit(
        args,
        answer,
        lambda a: table(a.get("links", []), ["from", "to", "values"], empty="(no Links)") + _more(a),
    )
    return 0
