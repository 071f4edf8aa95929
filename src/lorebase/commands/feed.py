"""Following changes: events (the SSE stream), changes (the polling fallback) and webhooks
(docs/feed.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from lorebase.backoff import exponential, jittered
from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import Usage, client_command, emit, fields, json_object_argument, short, table
from lorebase.problems import Problem


def _event_line(event: dict[str, Any]) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in (event.get("kinds") or {}).items())
    return (
        f"{event.get('sequence')}  {short(event.get('revision'))}  {event.get('created_at', '')}  "
        f"{event.get('author', '')}  {kinds}  {event.get('message', '')}"
    ).rstrip()


def _events_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--branch", default="main", help="the branch to follow (default main)")
    parser.add_argument("--kinds", default="", help="only Revisions changing these Kinds, comma-separated")
    parser.add_argument("--last-event-id", default="", help="resume after this event sequence")
    parser.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep following (reconnecting after the server closes); Ctrl-C ends",
    )
    parser.add_argument("--max", type=int, default=0, help="stop after this many events")


RECONNECT_MAX_S = 30.0  # the longest wait between two reconnections of `events --follow`


def _reconnect(problem: Problem) -> bool:
    """Whether `events --follow` tries again after `problem`: the stream broke or the server is
    busy (429, 503), not a refusal that the same request would get again (401, 403, 404, 409)."""
    return problem.status in (429, 502, 503, 504)


@client_command("events", "print the Revisions committed on a branch as they happen (SSE)", _events_arguments)
async def _events(client: RestClient, args: argparse.Namespace) -> int:
    """With --follow, as EventSource does: reconnect after the server closes or the stream breaks,
    resuming after the last event seen (Last-Event-ID), waiting a jittered, doubling delay between
    failed attempts."""
    seen = 0
    last = args.last_event_id
    failures = 0
    while True:
        try:
            async for frame in client.events(
                domain=args.domain, branch=args.branch, kinds=args.kinds, last_event_id=last
            ):
                failures = 0
                last = frame.get("id", last)
                data = frame["data"]
                if args.json:
                    print(json.dumps(data, ensure_ascii=False), flush=True)
                else:
                    print(_event_line(data), flush=True)
                seen += 1
                if args.max and seen >= args.max:
                    return 0
        except Problem as problem:
            if not (args.follow and _reconnect(problem)):
                raise
            wait = jittered(exponential(failures, 0.5, RECONNECT_MAX_S), 0.5)
            failures += 1
            print(f"lorebase: {problem.detail}; reconnecting in {wait:.1f} s", file=sys.stderr, flush=True)
            await asyncio.sleep(wait)
            continue
        if not args.follow:
            return 0


def _changes_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--branch", default="main", help="the branch (default main)")
    parser.add_argument("--since", default="", help="the Revision after which to list (default: the latest)")
    parser.add_argument("--kinds", default="", help="only Revisions changing these Kinds, comma-separated")
    parser.add_argument("--limit", type=int, default=0)


@client_command(
    "changes", "the Revisions committed on a branch after a Revision (polling)", _changes_arguments
)
async def _changes(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.changes(
        domain=args.domain, branch=args.branch, since=args.since, kinds=args.kinds, limit=args.limit
    )

    def human(a: Any) -> str:
        lines = [_event_line(e) for e in a.get("events", [])] or ["(no changes)"]
        lines.append(f"next_since: {a.get('next_since')}{'  (more: ask again)' if a.get('more') else ''}")
        return "\n".join(lines)

    emit(args, answer, human)
    return 0


def _webhooks_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "create", "update", "delete"])
    parser.add_argument("id", nargs="?", metavar="WEBHOOK", help="update, delete: the webhook id")
    parser.add_argument("--body", help='create, update: {"url", "events", "branches", "clearances"} as JSON')


@client_command("webhooks", "list, create, update or delete webhooks (domain.settings)", _webhooks_arguments)
async def _webhooks(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_webhooks(domain=args.domain)
        emit(args, answer, lambda a: table(a.get("webhooks", []), ["id", "url", "events", "branches"]))
        return 0
    if args.action in ("create", "update") and not args.body:
        raise Usage(f"webhooks {args.action} needs --body JSON")
    if args.action == "create":
        answer = await client.create_webhook(
            domain=args.domain, body=json_object_argument(args.body, "--body")
        )
        if not args.json:
            print("the secret is shown only this once:", file=sys.stderr)
    else:
        if not args.id:
            raise Usage(f"webhooks {args.action} needs a WEBHOOK id")
        if args.action == "update":
            body = json_object_argument(args.body, "--body")
            answer = await client.update_webhook(domain=args.domain, id=args.id, body=body)
        else:
            answer = await client.delete_webhook(domain=args.domain, id=args.id)
    emit(args, answer, lambda a: fields(a.items()))
    return 0
