"""Schema commands (docs/schema.md, "Changing a schema" and "Onboarding"; docs/cli.md):

- `lorebase schema [--branch B] [--at REV]`: the schema as the gateway serves it;
- `lorebase schema infer FILE...`: a change set proposed from samples (lorebase.schema.inference),
  printed to review; nothing is sent anywhere;
- `lorebase schema diff FILE`: what a change set (or a whole schema document) would change in a
  branch's schema, worked out here from the schema the gateway serves;
- `lorebase schema apply FILE [--dry-run]` (and its older name `lorebase schema-change FILE`): the
  change set sent to the branch, or its dry run. A change set (not a dry run) is sent with
  `Prefer: respond-async`: the gateway answers 202 with a job at once, and the command follows it
  (`GET .../schema/changes/{id}`), printing its progress, until it committed or failed, so a
  migration of millions of Records outlives no request deadline;
- `lorebase schema jobs [ID]`: the schema change jobs of the Domain, or one of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import yaml

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    REFUSED,
    USAGE,
    Usage,
    call_arguments,
    client_command,
    emit,
    fields,
    read_file,
    short,
    table,
)
from lorebase.problems import Problem
from lorebase.schema import SchemaError, load_schema, parse_yaml
from lorebase.schema.changes import SchemaChangeError, apply_changes, schema_diff
from lorebase.schema.inference import Sample, SampleError, infer, read_samples, table_sample

ACTIONS = ("show", "infer", "diff", "apply", "jobs")
POLL_S = 1.0  # how often `schema apply` asks how its job is


def _schema_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        default="show",
        help="show (the default): the schema; infer: a change set proposed from samples; diff: what a "
        "change set or schema document would change; apply: send a change set (--dry-run to preview) "
        "and follow its job; jobs [ID]: the schema change jobs, or one",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="infer: samples (.csv, .tsv, .json, .jsonl, .ndjson); diff and apply: a change set "
        '(JSON or YAML, {"changes": [...]} or the list alone); diff: or a schema document',
    )
    parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    parser.add_argument(
        "--at", default="", metavar="REV", help="show: as of this Revision (or a prefix of 12+)"
    )
    _change_arguments(parser, file=False)
    parser.add_argument(
        "--format", choices=["yaml", "json"], default="yaml", help="infer: how to print the change set"
    )
    parser.add_argument(
        "--dsn",
        metavar="URL",
        help="infer: a PostgreSQL database to sample (postgresql://user@host/db; the password from "
        "PGPASSWORD or ~/.pgpass, never an argument)",
    )
    parser.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="[SCHEMA.]TABLE",
        help="infer: a table of --dsn (repeat)",
    )
    parser.add_argument(
        "--limit", type=int, default=1000, metavar="N", help="infer: rows sampled per table (default 1000)"
    )


def _change_arguments(parser: argparse.ArgumentParser, *, file: bool = True) -> None:
    if file:
        parser.add_argument(
            "file", metavar="FILE", help='a change set: JSON or YAML, {"changes": [...]} or the list alone'
        )
        parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    parser.add_argument("--dry-run", action="store_true", help="apply: show what it would do, store nothing")
    parser.add_argument("--message", help="apply: the commit message")
    parser.add_argument(
        "--expected-head", metavar="REV", help="apply: fail (409) if the branch head is another"
    )
    parser.add_argument(
        "--on-invalid",
        choices=["refuse", "clear"],
        help="apply: what to do with values that would be invalid",
    )


@client_command("schema", "the schema; infer one from samples, diff or apply a change set", _schema_arguments)
async def _schema(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "infer":
        tables = await _table_samples(args.dsn, args.table, args.limit) if args.dsn or args.table else []
        return _infer(args, tables)
    if args.action == "show":
        if args.files:
            raise Usage("lorebase schema takes no FILE; did you mean schema infer, diff or apply?")
        emit(args, await client.get_schema(**call_arguments("get_schema", args)), _schema_human)
        return 0
    if args.action == "jobs":
        return await _jobs(client, args)
    if len(args.files) != 1:
        raise Usage(f"schema {args.action} takes one FILE")
    if args.action == "diff":
        return await _diff(client, args, args.files[0])
    return await _apply(client, args, args.files[0])


@client_command("schema-change", "apply a schema change set on a branch (as schema apply)", _change_arguments)
async def _schema_change(client: RestClient, args: argparse.Namespace) -> int:
    return await _apply(client, args, args.file)


# -- show --------------------------------------------------------------------------------------------


def _schema_human(schema: Any) -> str:
    parts = [f"{schema.get('domain')}/{schema.get('branch')} at {short(schema.get('revision'))}"]
    for section, columns in (
        ("kinds", ["name", "key", "title", "description"]),
        ("relations", ["name", "from", "to", "inverse", "cardinality"]),
        ("traits", ["name", "kinds", "description"]),
        ("lenses", ["name", "kinds", "relations", "description"]),
        ("operations", ["name", "description"]),
    ):
        parts.append(f"\n{section.capitalize()}\n" + table(schema.get(section) or [], columns))
    return "\n".join(parts)


def document_of(served: dict[str, Any]) -> dict[str, Any]:
    """The schema document of a GET /schema answer (its sections are lists with a `name`)."""
    document: dict[str, Any] = {"description": served.get("description") or ""}
    for section in ("kinds", "relations", "traits", "lenses", "operations", "sources"):
        members = {}
        for member in served.get(section) or []:
            body = {k: v for k, v in member.items() if k != "name"}
            if section == "traits":
                body.pop("kinds", None)  # added by the answer: the Kinds implementing it
            members[member["name"]] = body
        document[section] = members
    return document


# -- infer -------------------------------------------------------------------------------------------


def _infer(args: argparse.Namespace, tables: list[Sample]) -> int:
    if not args.files and not tables:
        raise Usage("schema infer takes FILEs (.csv, .tsv, .json, .jsonl, .ndjson) or --dsn URL --table T")
    samples = list(tables)
    for name in args.files:
        text = read_file(name).decode("utf-8-sig", errors="replace")
        try:
            samples += read_samples(name, text)
        except SampleError as exc:
            raise Usage(str(exc)) from None
    inference = infer(samples)
    if args.json or args.format == "json":
        print(json.dumps(inference.document(), indent=2, ensure_ascii=False))
        return 0
    sources = [*args.files, *(f"table {t}" for t in args.table)]
    header = [
        "# A change set proposed by `lorebase schema infer` from " + ", ".join(sources) + ".",
        "# Review it, then: lorebase schema diff FILE; lorebase schema apply FILE --dry-run",
        *(f"# note: {note}" for note in inference.notes),
    ]
    body = yaml.safe_dump({"changes": inference.changes}, sort_keys=False, allow_unicode=True, width=100)
    print("\n".join(header) + "\n" + body.rstrip("\n"))
    return 0


_COLUMNS = """
SELECT column_name, data_type, is_nullable = 'YES', numeric_precision, numeric_scale
  FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position
"""
_PRIMARY_KEY = """
SELECT a.attname FROM pg_index i
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
 WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
"""
_FOREIGN_KEYS = """
SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c
  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
 WHERE c.conrelid = $1::regclass AND c.contype = 'f' AND cardinality(c.conkey) = 1
 ORDER BY a.attname
"""


async def _table_samples(dsn: str | None, tables: list[str], limit: int) -> list[Sample]:
    """Samples of PostgreSQL tables: their catalog (types, primary key, foreign keys) and up to
    `limit` rows each, ordered by the primary key so that the same table gives the same sample."""
    if not dsn or not tables:
        raise Usage("schema infer --dsn URL needs --table T (one or more), and --table needs --dsn")
    if limit < 1:
        raise Usage("--limit is a number of rows, 1 or more")
    import asyncpg

    try:
        conn = await asyncpg.connect(dsn.replace("postgresql+asyncpg://", "postgresql://"), timeout=30)
    except (OSError, asyncpg.PostgresError, ValueError) as exc:
        raise Usage(f"cannot connect to --dsn: {exc}") from None
    samples = []
    try:
        for table in tables:
            schema_name, _, name = table.rpartition(".")
            schema_name = schema_name or "public"
            columns = await conn.fetch(_COLUMNS, schema_name, name)
            if not columns:
                raise Usage(f"no table {table!r} in --dsn (or no column of it may be read)")
            qualified = ".".join(_quoted(part) for part in (schema_name, name))
            key = [row[0] for row in await conn.fetch(_PRIMARY_KEY, qualified)]
            references = {
                row[0]: row[1].rpartition(".")[2] for row in await conn.fetch(_FOREIGN_KEYS, qualified)
            }
            order = ", ".join(_quoted(c) for c in key) or "1"
            rows = await conn.fetch(f"SELECT * FROM {qualified} ORDER BY {order} LIMIT {int(limit)}")  # noqa: S608
            samples.append(
                table_sample(
                    name,
                    [(c[0], c[1], bool(c[2]), c[3], c[4]) for c in columns],
                    key,
                    references,
                    [dict(row) for row in rows],
                )
            )
    except asyncpg.PostgresError as exc:
        raise Usage(f"reading the tables failed: {exc}") from None
    finally:
        await conn.close()
    return samples


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


# -- diff and apply ----------------------------------------------------------------------------------


def _load(name: str) -> Any:
    text = read_file(name).decode("utf-8", errors="replace")
    try:
        return parse_yaml(text)
    except SchemaError as exc:
        raise Usage(f"{name}: not JSON or YAML ({exc})") from exc


def change_set(name: str, document: Any) -> dict[str, Any]:
    """The body of a change set file: {"changes": [...]} (`notes` of an inferred one left out) or the
    list alone."""
    if isinstance(document, list):
        document = {"changes": document}
    if not isinstance(document, dict) or not isinstance(document.get("changes"), list):
        raise Usage(f'{name}: a change set is {{"changes": [...]}} or a list of changes')
    return {k: v for k, v in document.items() if k != "notes"}


async def _branch(client: RestClient, args: argparse.Namespace) -> str:
    return str(args.branch or (await client.get_domain(domain=args.domain)).get("default_branch") or "main")


async def _diff(client: RestClient, args: argparse.Namespace, name: str) -> int:
    loaded = _load(name)
    branch = await _branch(client, args)
    served = await client.get_schema(domain=args.domain, branch=branch, at="")
    before = load_schema(document_of(served)).document
    answer: dict[str, Any] = {"branch": branch, "revision": served.get("revision"), "file": name}
    try:
        if isinstance(loaded, dict) and "kinds" in loaded and "changes" not in loaded:
            after = load_schema(loaded).document  # a whole schema document
        else:
            plan = apply_changes(before, change_set(name, loaded)["changes"])
            after = plan.schema.document
            answer["renamed"] = {"kinds": plan.renamed_kinds, "relations": plan.renamed_relations}
    except SchemaChangeError as error:
        answer["issues"] = error.issues
    except SchemaError as error:
        answer["issues"] = [{"path": "", "rule": "schema.invalid", "message": str(p)} for p in error.problems]
    if "issues" not in answer:
        answer.update(schema_diff(before, after))
    emit(args, answer, _diff_human)
    return USAGE if answer.get("issues") else 0


def _diff_human(answer: Any) -> str:
    head = f"{answer['file']} against {answer['branch']} at {short(answer.get('revision'))}"
    if answer.get("issues"):
        return head + ": does not apply\n" + table(answer["issues"], ["path", "rule", "message"])
    lines = [head]
    for what in ("added", "removed", "changed"):
        lines.append(f"{what}: {', '.join(answer[what]) or '-'}")
    renamed = answer.get("renamed") or {}
    moved = [
        f"{a} -> {b}" for section in ("kinds", "relations") for a, b in (renamed.get(section) or {}).items()
    ]
    if moved:
        lines.append(f"renamed: {', '.join(moved)}")
    return "\n".join(lines)


def _apply_human(answer: Any) -> str:
    lines = [
        f"{answer.get('status')}: schema of {answer.get('branch')} "
        f"{short(answer.get('previous_schema_version'))} -> {short(answer.get('schema_version'))}",
        table(answer.get("changes", []), ["op", "target", "to"], empty="(no changes)"),
        fields(
            [
                ("revision", answer.get("revision")),
                ("records migrated", (answer.get("migrated") or {}).get("records")),
                ("links migrated", (answer.get("migrated") or {}).get("links")),
                ("touches", answer.get("touches")),
            ]
        ),
    ]
    if answer.get("violations"):
        lines.append(f"violations ({answer.get('violation_count')}):")
        lines.append(table(answer["violations"], ["path", "rule", "message"]))
    return "\n".join(lines)


async def _apply(client: RestClient, args: argparse.Namespace, name: str) -> int:
    body = change_set(name, _load(name))
    for member in ("message", "expected_head", "on_invalid"):
        value = getattr(args, member, None)
        if value:
            body[member] = value
    if args.dry_run:
        body["dry_run"] = True
    branch = await _branch(client, args)
    if args.dry_run:
        answer = await client.change_schema(domain=args.domain, branch=branch, body=body)
    else:
        job = await client.change_schema(domain=args.domain, branch=branch, body=body, prefer="respond-async")
        answer = await _follow(client, args, job)
    emit(args, answer, _apply_human)
    return 0 if answer.get("valid", True) else REFUSED


async def _follow(client: RestClient, args: argparse.Namespace, job: dict[str, Any]) -> Any:
    """Poll a schema change job until it answers; its progress on stderr. A job that failed raises
    its problem, as the synchronous call would have."""
    said = ""
    while True:
        if job["status"] != "running":
            break
        progress = job.get("progress")
        line = f"job {job['id']}: running" + (
            f", {progress['kind']} {progress['done']}/{progress['total']} Records" if progress else ""
        )
        if line != said and not getattr(args, "json", False):
            print(line, file=sys.stderr, flush=True)
            said = line
        await asyncio.sleep(POLL_S)
        try:
            job = await client.get_schema_change(domain=args.domain, id=job["id"])
        except Problem as answered:
            if answered.status != 503:  # unavailable for a moment ("retry shortly"): poll again
                raise
    if job["status"] == "failed":
        problem = dict(job["problem"] or {})
        raise Problem(
            int(problem.pop("status", 500)),
            str(problem.pop("code", "internal")),
            str(problem.pop("detail", "the change set failed")),
            title=problem.pop("title", None),
            **{k: v for k, v in problem.items() if k != "type"},
        )
    return job["result"]


async def _jobs(client: RestClient, args: argparse.Namespace) -> int:
    if len(args.files) > 1:
        raise Usage("schema jobs takes at most one job ID")
    if args.files:
        emit(args, await client.get_schema_change(domain=args.domain, id=args.files[0]), _job_human)
        return 0
    answer = await client.list_schema_changes(domain=args.domain, branch=args.branch)
    emit(args, answer, lambda a: table(a["jobs"], ["id", "status", "branch", "created_by", "created_at"]))
    return 0


def _job_human(job: Any) -> str:
    lines = [
        fields(
            [
                ("job", job["id"]),
                ("status", job["status"]),
                ("branch", job["branch"]),
                ("created", f"{job['created_at']} by {job['created_by']}"),
                ("finished", job.get("finished_at")),
                ("revision", job.get("revision")),
                ("progress", job.get("progress")),
            ]
        )
    ]
    if job.get("result"):
        lines.append(_apply_human(job["result"]))
    if job.get("problem"):
        lines.append(f"problem: {job['problem'].get('code')}: {job['problem'].get('detail', '')}")
    return "\n".join(lines)
