"""Branch and review commands: branches, tags, proposals (with their Conflicts) and schema suggestions
(docs/cli.md, docs/branches.md)."""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import Usage, client_command, emit, fields, json_argument, short, table

# -- branches ----------------------------------------------------------------------------------------


def _branches_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "show", "create", "update", "delete"])
    parser.add_argument("name", nargs="?", metavar="BRANCH")
    parser.add_argument("--from", dest="from_branch", default="", help="create: start from this branch")
    parser.add_argument("--mode", choices=["copy", "overlay"], help="create: copy (default) or overlay")
    protection = parser.add_mutually_exclusive_group()
    protection.add_argument("--protected", dest="protected", action="store_true", default=None)
    protection.add_argument("--unprotected", dest="protected", action="store_false")
    parser.add_argument("--required-approvals", type=int, help="create, update: approvals to merge")


def _branch_human(branch: Any) -> str:
    return fields((k, short(v) if k == "head" else v) for k, v in branch.items() if k != "revision")


@client_command("branches", "list, show, create, update or delete branches", _branches_arguments)
async def _branches(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_branches(domain=args.domain)
        rows = [{**b, "head": short(b.get("head"))} for b in answer.get("branches", [])]
        emit(args, answer, lambda _: table(rows, ["name", "head", "protected", "mode", "from", "created_by"]))
        return 0
    if not args.name:
        raise Usage(f"branches {args.action} needs a BRANCH")
    if args.action == "show":
        answer = await client.get_branch(domain=args.domain, branch=args.name)
    elif args.action == "create":
        answer = await client.create_branch(
            domain=args.domain,
            name=args.name,
            from_=args.from_branch,
            mode=args.mode or "",
            protected=args.protected,
            required_approvals=args.required_approvals,
        )
    elif args.action == "update":
        if args.protected is None and args.required_approvals is None:
            raise Usage("branches update needs --protected, --unprotected or --required-approvals")
        answer = await client.update_branch(
            domain=args.domain,
            branch=args.name,
            protected=args.protected,
            required_approvals=args.required_approvals,
        )
    else:
        answer = await client.delete_branch(domain=args.domain, branch=args.name)
    emit(args, answer, _branch_human)
    return 0


# -- tags --------------------------------------------------------------------------------------------


def _tags_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "show", "create", "delete"])
    parser.add_argument("name", nargs="?", metavar="TAG")
    parser.add_argument("revision", nargs="?", metavar="REVISION", help="create: the Revision to name")
    parser.add_argument("--limit", type=int, default=0, help="list: a page of at most this many")
    parser.add_argument("--cursor", default="", help="list: the next_cursor of the previous page")


@client_command("tags", "list, show, create or delete tags (immutable names of Revisions)", _tags_arguments)
async def _tags(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_tags(domain=args.domain, limit=args.limit, cursor=args.cursor)
        rows = [{**t, "revision": short(t.get("revision"))} for t in answer.get("tags", [])]
        emit(args, answer, lambda _: table(rows, ["name", "revision", "branch", "created_by", "created_at"]))
        return 0
    if not args.name:
        raise Usage(f"tags {args.action} needs a TAG")
    if args.action == "create":
        if not args.revision:
            raise Usage("tags create needs a TAG and a REVISION")
        answer = await client.create_tag(domain=args.domain, name=args.name, revision=args.revision)
    elif args.action == "show":
        answer = await client.get_tag(domain=args.domain, tag=args.name)
    else:
        await client.delete_tag(domain=args.domain, tag=args.name)
        answer = {"domain": args.domain, "tag": args.name, "deleted": True}
    emit(args, answer, lambda a: fields(a.items()))
    return 0


# -- proposals ---------------------------------------------------------------------------------------


def _proposals_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=["list", "show", "create", "review", "merge", "close", "conflicts", "resolve"]
    )
    parser.add_argument("proposal", nargs="?", metavar="PROPOSAL", help="a Proposal id (prp_...)")
    parser.add_argument("conflict", nargs="?", metavar="CONFLICT", help="resolve: the Conflict id")
    parser.add_argument("--status", choices=["open", "merged", "closed", "all"], help="list: which ones")
    parser.add_argument("--assigned", action="store_true", help="list: those whose stewards include me")
    parser.add_argument("--limit", type=int, default=0, help="list: a page of at most this many")
    parser.add_argument("--cursor", default="", help="list: the next_cursor of the previous page")
    parser.add_argument("--approve", action="store_true", help="review: approve")
    parser.add_argument("--request-changes", action="store_true", help="review: request changes")
    parser.add_argument("--comment", default="", help="review: a comment")
    parser.add_argument("--source", default="", help="create: the source branch")
    parser.add_argument("--target", default="", help="create: the target branch (default branch)")
    parser.add_argument("--title", default="", help="create: the title")
    parser.add_argument("--description", default="", help="create: the description")
    parser.add_argument("--resolution", choices=["ours", "theirs", "value"], help="resolve: which side")
    parser.add_argument("--value", help="resolve: with --resolution value, the value as JSON")


def _proposal_human(p: Any) -> str:
    approval = p.get("approval") or {}
    merge = p.get("merge") or {}
    lines = [
        f"{p.get('id')}: {p.get('title')}",
        fields(
            [
                ("status", p.get("status")),
                ("source -> target", f"{p.get('source_ref')} -> {p.get('target_ref')}"),
                ("author", p.get("author")),
                ("task", p.get("task")),
                ("kinds", p.get("kinds")),
                ("stewards", p.get("stewards")),
                ("approvals", f"{approval.get('approvals')} of {approval.get('required')}"),
                ("mergeable", merge.get("mergeable")),
                ("blockers", merge.get("blockers")),
                ("conflicts", p.get("conflicts")),
                ("merged_revision", p.get("merged_revision")),
            ]
        ),
    ]
    if p.get("description"):
        lines += ["", str(p["description"])]
    if p.get("reviews"):
        lines += ["", table(p["reviews"], ["reviewer", "decision", "comment", "at"])]
    return "\n".join(lines)


@client_command("proposals", "list, show, create, review, merge or close Proposals", _proposals_arguments)
async def _proposals(client: RestClient, args: argparse.Namespace) -> int:
    domain = args.domain
    if args.action == "list":
        answer = await client.list_proposals(
            domain=domain,
            status=args.status or "",
            assigned="me" if args.assigned else "",
            limit=args.limit,
            cursor=args.cursor,
        )
        columns = ["id", "status", "title", "source_ref", "target_ref", "author"]
        emit(args, answer, lambda a: table(a.get("proposals", []), columns))
        return 0
    if args.action == "create":
        if not args.source:
            raise Usage("proposals create needs --source BRANCH")
        answer = await client.create_proposal(
            domain=domain,
            source=args.source,
            target=args.target,
            title=args.title,
            description=args.description,
        )
        emit(args, answer, _proposal_human)
        return 0
    if not args.proposal:
        raise Usage(f"proposals {args.action} needs a PROPOSAL id")
    proposal = args.proposal
    if args.action == "show":
        answer = await client.get_proposal(domain=domain, proposal=proposal)
    elif args.action == "review":
        if args.approve == args.request_changes:
            raise Usage("proposals review needs exactly one of --approve and --request-changes")
        decision = "approve" if args.approve else "request_changes"
        answer = await client.review_proposal(
            domain=domain, proposal=proposal, decision=decision, comment=args.comment
        )
    elif args.action == "merge":
        answer = await client.merge_proposal(domain=domain, proposal=proposal)
    elif args.action == "close":
        answer = await client.close_proposal(domain=domain, proposal=proposal)
    elif args.action == "conflicts":
        answer = await client.list_conflicts(domain=domain, proposal=proposal)
        columns = ["id", "code", "ref", "attribute", "ours", "theirs", "status"]
        emit(args, answer, lambda a: table(a.get("conflicts", []), columns))
        return 0
    else:
        if not args.conflict or not args.resolution:
            raise Usage("proposals resolve needs PROPOSAL CONFLICT and --resolution ours|theirs|value")
        value = json_argument(args.value, "--value") if args.value is not None else None
        if args.resolution == "value" and args.value is None:
            raise Usage("--resolution value needs --value JSON")
        answer = await client.resolve_conflict(
            domain=domain, proposal=proposal, conflict=args.conflict, resolution=args.resolution, value=value
        )
        emit(args, answer, lambda a: fields(a.items()))
        return 0
    emit(args, answer, _proposal_human)
    return 0


# -- suggestions -------------------------------------------------------------------------------------


def _suggestions_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "accept", "dismiss"])
    parser.add_argument("id", nargs="?", metavar="SUGGESTION")
    parser.add_argument("--status", choices=["open", "accepted", "dismissed", "all"])


@client_command("suggestions", "schema suggestions learned from resolve misses", _suggestions_arguments)
async def _suggestions(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_suggestions(domain=args.domain, status=args.status or "")
        columns = ["id", "phrase", "type", "target", "score", "misses", "status"]
        emit(args, answer, lambda a: table(a.get("suggestions", []), columns))
        return 0
    if not args.id:
        raise Usage(f"suggestions {args.action} needs a SUGGESTION id")
    if args.action == "accept":
        answer = await client.accept_suggestion(domain=args.domain, id=args.id)
    else:
        answer = await client.dismiss_suggestion(domain=args.domain, id=args.id)
    emit(args, answer, lambda a: fields(a.items()))
    return 0
