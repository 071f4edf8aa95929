"""Administration commands: domains, principals, keys, grants, the stack's health and agent
sessions (docs/cli.md). Most need the admin key or `domain.settings`."""

from __future__ import annotations

import argparse
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    UNAVAILABLE,
    Usage,
    client_command,
    csv_list,
    emit,
    fields,
    json_object_argument,
    read_file,
    table,
)
from lorebase.schema import SchemaError, parse_yaml


def _one(answer: Any) -> str:
    return fields(answer.items()) if isinstance(answer, dict) else str(answer)


def _domains_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "show", "create"], default="list")
    parser.add_argument("name", nargs="?", metavar="DOMAIN", help="show, create: the Domain name")
    parser.add_argument("--schema", metavar="FILE", help="create: the schema document (YAML or JSON)")
    parser.add_argument("--settings", metavar="JSON", help="create: setting overrides as JSON")
    parser.add_argument("--default-branch", default="", help="create: default main")


@client_command("domains", "list, show or create Domains", _domains_arguments, domain=False)
async def _domains(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_domains()
        emit(args, answer, lambda a: table(a.get("domains", []), ["name", "default_branch"]))
        return 0
    if not args.name:
        raise Usage(f"domains {args.action} needs a DOMAIN name")
    if args.action == "show":
        emit(args, await client.get_domain(domain=args.name), _one)
        return 0
    if not args.schema:
        raise Usage("domains create needs --schema FILE")
    try:
        schema = parse_yaml(read_file(args.schema))
    except SchemaError as exc:
        raise Usage(f"{args.schema} is not YAML or JSON: {exc}") from exc
    settings = json_object_argument(args.settings, "--settings") if args.settings else None
    answer = await client.create_domain(
        name=args.name, schema=schema, settings=settings, default_branch=args.default_branch
    )
    emit(args, answer, _one)
    return 0


def _principals_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["create"], help="create a principal (admin only)")
    parser.add_argument("id", metavar="PRINCIPAL", help="lower-case letters, digits and _")
    parser.add_argument("--type", choices=["user", "service"], default="user", help="service: an agent")
    parser.add_argument("--name", default="")
    parser.add_argument("--tenant", default="")


@client_command("principals", "create a principal (user or service)", _principals_arguments, domain=False)
async def _principals(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.create_principal(id=args.id, type=args.type, name=args.name, tenant=args.tenant)
    emit(args, answer, _one)
    return 0


def _keys_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["create", "revoke"])
    parser.add_argument("principal", metavar="PRINCIPAL")
    parser.add_argument("key_id", nargs="?", metavar="KEY_ID", help="revoke: the key id (key_...)")


@client_command("keys", "create or revoke a principal's API keys (admin only)", _keys_arguments, domain=False)
async def _keys(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "create":
        answer = await client.create_key(principal=args.principal)
        emit(args, answer, lambda a: _one(a) + "\n(the key is shown only this once)")
        return 0
    if not args.key_id:
        raise Usage("keys revoke needs PRINCIPAL KEY_ID")
    emit(args, await client.revoke_key(principal=args.principal, key_id=args.key_id), _one)
    return 0


def _grants_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["create", "delete"])
    parser.add_argument("grant_id", nargs="?", metavar="GRANT", help="delete: the grant id (grt_...)")
    parser.add_argument("--principal", help="create: who gets the grant")
    parser.add_argument("--role", choices=["viewer", "editor", "reviewer", "admin"], help="create: the role")
    parser.add_argument("--branches", default="", help="create: branch names or globs, comma-separated")
    parser.add_argument("--kinds", default="", help="create: narrow the grant to these Kinds")


@client_command("grants", "grant a role in the Domain, or delete a grant", _grants_arguments)
async def _grants(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "create":
        if not args.principal or not args.role:
            raise Usage("grants create needs --principal and --role")
        answer = await client.create_grant(
            domain=args.domain,
            principal=args.principal,
            role=args.role,
            branches=csv_list(args.branches) or None,
            kinds=csv_list(args.kinds) or None,
        )
    else:
        if not args.grant_id:
            raise Usage("grants delete needs a GRANT id")
        answer = await client.delete_grant(domain=args.domain, grant_id=args.grant_id)
    emit(args, answer, _one)
    return 0


@client_command("status", "whether the stack answers (GET /health; exit 5 when not)", domain=False)
async def _status(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.health()
    emit(args, answer, _one)
    return 0 if answer.get("status") == "ok" else UNAVAILABLE


def _sessions_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "show", "note"])
    parser.add_argument(
        "session", metavar="SESSION", nargs="?", help="show, note: the agent session id (Lorebase-Session)"
    )
    parser.add_argument("text", nargs="?", help="note: the text of the note")
    parser.add_argument("--domain", default="", help="list: only sessions with an entry in this Domain")
    parser.add_argument("--principal", default="", help="list: only this principal's sessions (admin)")
    parser.add_argument("--limit", type=int, default=0, help="list: at most this many (default 50)")
    parser.add_argument("--before", default="", help="list: the `next` cursor of the previous page")


@client_command(
    "sessions",
    "agent sessions: list them, show one's trace, or add a note to one",
    _sessions_arguments,
    domain=False,
)
async def _sessions(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        answer = await client.list_sessions(
            domain=args.domain, principal=args.principal, limit=args.limit, before=args.before
        )
        columns = ["session", "principal", "last_at", "steps", "errors", "notes"]
        emit(args, answer, lambda a: table(a.get("sessions", []), columns))
        return 0
    if not args.session:
        raise Usage(f"sessions {args.action} needs SESSION")
    if args.action == "note":
        if not args.text:
            raise Usage("sessions note needs SESSION TEXT")
        emit(args, await client.add_session_note(session=args.session, text=args.text), _one)
        return 0
    answer = await client.get_session(session=args.session)
    emit(args, answer, lambda a: table(a.get("entries", []), ["at", "kind", "call", "status", "text"]))
    return 0


# -- erasures ----------------------------------------------------------------------------------------


def _erasures_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "create"])
    parser.add_argument("records", nargs="*", metavar="KIND/KEY", help="create: the Records to erase")
    parser.add_argument(
        "--subject",
        nargs=3,
        metavar=("KIND", "ATTRIBUTE", "VALUE"),
        help="create: erase the Records of KIND whose ATTRIBUTE equals VALUE",
    )
    parser.add_argument("--reason", default="", help="create: why (required; kept with the erasure)")
    parser.add_argument("--limit", type=int, default=0, help="list: a page of at most this many")
    parser.add_argument("--cursor", default="", help="list: the next_cursor of the previous page")


@client_command(
    "erasures", "list erasures, or erase the vault values of Records (docs/erasure.md)", _erasures_arguments
)
async def _erasures(client: RestClient, args: argparse.Namespace) -> int:
    columns = ["id", "records", "attributes", "refs", "by", "at", "reason"]
    if args.action == "list":
        answer = await client.list_erasures(domain=args.domain, limit=args.limit, cursor=args.cursor)
        emit(args, answer, lambda a: table(a.get("erasures", []), columns))
        return 0
    if not args.reason:
        raise Usage("erasures create needs --reason")
    if bool(args.records) == bool(args.subject):
        raise Usage(
            "erasures create needs KIND/KEY Records or --subject KIND ATTRIBUTE VALUE, one of the two"
        )
    target: dict[str, Any] = (
        {"records": args.records}
        if args.records
        else {"subject": dict(zip(("kind", "attribute", "value"), args.subject, strict=True))}
    )
    answer = await client.create_erasure(domain=args.domain, reason=args.reason, **target)
    emit(args, answer, _one)
    return 0
