"""`lorebase reconciliation`: candidate pairs of Records likely to be the same thing, listed, shown,
accepted (the Records merged, or a Proposal on a protected branch), dismissed, or computed now
(docs/reconciliation.md)."""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import Usage, client_command, emit, fields, table


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "show", "accept", "dismiss", "scan"])
    parser.add_argument("id", nargs="?", metavar="CANDIDATE")
    parser.add_argument("--status", choices=["open", "accepted", "dismissed", "all"], default="")
    parser.add_argument("--kind", default="", help="list: the candidates of one Kind")
    parser.add_argument("--mine", action="store_true", help="list: those of the Kinds you steward")
    parser.add_argument("--limit", type=int, default=0, help="list: a page of at most this many")
    parser.add_argument("--cursor", default="", help="list: the next_cursor of the previous page")
    parser.add_argument("--keep", help="accept: the key of the Record that survives")
    parser.add_argument("--reason", help="accept (optional) and dismiss (required): why")
    parser.add_argument("--task", help="accept on a protected branch: the task branch's name")


def _rules(candidate: dict[str, Any]) -> str:
    return ", ".join(f"{e['rule']}({e['attribute']})" for e in candidate.get("evidence", []))


def _accepted(answer: dict[str, Any]) -> str:
    lines = [
        fields(
            [
                ("status", answer.get("status")),
                ("kept", answer.get("kept")),
                ("removed", answer.get("removed")),
                ("branch", answer.get("branch")),
                ("revision", answer.get("revision")),
                ("filled", ", ".join(answer.get("filled", [])) or "-"),
                ("moved links", answer.get("moved_links")),
                ("proposal", (answer.get("proposal") or {}).get("id", "-")),
            ]
        )
    ]
    if answer.get("conflicts"):
        lines += [
            "",
            "Kept over the removed Record's values:",
            table(answer["conflicts"], ["attribute", "kept", "dropped"]),
        ]
    if answer.get("dropped_links"):
        lines += ["", "Links not moved:", table(answer["dropped_links"], ["link", "reason"])]
    return "\n".join(lines)


@client_command(
    "reconciliation", "Records likely to be the same thing: list, show, accept, dismiss, scan", _arguments
)
async def _reconciliation(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_reconciliation(
            domain=args.domain,
            status=args.status,
            kind=args.kind,
            assigned="me" if args.mine else "",
            limit=args.limit or None,
            cursor=args.cursor,
        )
        rows = [{**c, "rules": _rules(c)} for c in answer.get("candidates", [])]
        columns = ["id", "kind", "record_a", "record_b", "score", "rules", "status"]
        emit(args, answer, lambda _: table(rows, columns))
        return 0
    if args.action == "scan":
        answer = await client.scan_reconciliation(domain=args.domain)
        emit(args, answer, lambda a: fields(a.items()))
        return 0
    if not args.id:
        raise Usage(f"reconciliation {args.action} needs a CANDIDATE id")
    if args.action == "show":
        answer = await client.get_reconciliation(domain=args.domain, id=args.id)
        emit(args, answer, lambda a: fields((k, v) for k, v in a.items() if k != "records"))
        return 0
    if args.action == "accept":
        if not args.keep:
            raise Usage("reconciliation accept needs --keep KEY (the Record that survives)")
        answer = await client.accept_reconciliation(
            domain=args.domain, id=args.id, keep=args.keep, reason=args.reason, task=args.task
        )
        emit(args, answer, _accepted)
        return 0
    if not args.reason:
        raise Usage("reconciliation dismiss needs --reason (why the two are not the same thing)")
    answer = await client.dismiss_reconciliation(domain=args.domain, id=args.id, reason=args.reason)
    emit(args, answer, lambda a: fields(a["candidate"].items()))
    return 0
