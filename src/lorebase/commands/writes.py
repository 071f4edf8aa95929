"""Write commands: exec (an Operation), import (a file in batches, with a progress bar), sync (a
Source) and embedding (docs/cli.md). Nothing here writes rows: every write is an Operation, an
import or a sync, with its provenance."""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from lorebase.clients.rest import RestClient
from lorebase.commands._runtime import (
    REFUSED,
    Usage,
    client_command,
    emit,
    fields,
    json_argument,
    json_object_argument,
    parameters,
    read_file,
    short,
    table,
)

# -- exec --------------------------------------------------------------------------------------------


def _exec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("operation", metavar="OPERATION", help="an Operation of the schema")
    parser.add_argument(
        "--param",
        "-p",
        action="append",
        metavar="NAME=VALUE",
        help="a parameter: NAME=VALUE (a string) or NAME:=JSON (a number, true, a list...); repeat",
    )
    parser.add_argument("--dry-run", action="store_true", help="validate and show the edits, store nothing")
    parser.add_argument("--task", help="a task slug: a write that needs review opens a Proposal")
    parser.add_argument("--intent", help="what the task is after (the start of the Proposal description)")
    parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    parser.add_argument("--message", help="the commit message")
    parser.add_argument("--expected-head", metavar="REV", help="fail (409) if the branch head is another")
    parser.add_argument("--idempotency-key", metavar="KEY", help="a retry with the same key is answered once")
    parser.add_argument("--auto-merge", action="store_true", help="with --task: ask for an immediate merge")


def _exec_human(answer: Any) -> str:
    status = answer.get("status")
    lines = [f"{status}: {answer.get('operation')} on {answer.get('branch')}"]
    if status == "dry_run":
        lines[0] += f" at {short(answer.get('head'))}; valid: {'yes' if answer.get('valid') else 'no'}"
        lines.append(table(answer.get("edits", []), ["op", "kind", "key", "values"], empty="(no edits)"))
        if answer.get("violations"):
            lines.append("violations:")
            lines.append(table(answer["violations"], ["path", "rule", "message"]))
        return "\n".join(lines)
    proposal = answer.get("proposal")
    lines.append(
        fields(
            [
                ("revision", answer.get("revision")),
                ("invocation", answer.get("invocation_id")),
                ("edits", answer.get("edit_count")),
            ]
        )
    )
    if proposal:
        blockers = (answer.get("merge") or {}).get("blockers") or []
        lines.append(
            fields(
                [
                    ("proposal", proposal.get("id")),
                    ("title", proposal.get("title")),
                    ("status", proposal.get("status")),
                    ("blockers", blockers),
                ]
            )
        )
    if answer.get("changes"):
        lines.append(table(answer["changes"], ["ref", "entity", "change", "attributes"]))
    if answer.get("replayed"):
        lines.append("(replayed: answered from the idempotency receipt)")
    return "\n".join(lines)


@client_command("exec", "execute an Operation (--dry-run first; --task for reviewed writes)", _exec_arguments)
async def _exec(client: RestClient, args: argparse.Namespace) -> int:
    if args.intent and not args.task:
        raise Usage("--intent needs --task")
    if args.auto_merge and not args.task:
        raise Usage("--auto-merge needs --task")
    body: dict[str, Any] = {"parameters": parameters(args.param)}
    for member, value in (
        ("dry_run", True if args.dry_run else None),
        ("task", args.task),
        ("intent", args.intent),
        ("branch", args.branch),
        ("message", args.message),
        ("expected_head", args.expected_head),
        ("idempotency_key", args.idempotency_key),
        ("auto_merge", True if args.auto_merge else None),
    ):
        if value not in (None, ""):
            body[member] = value
    answer = await client.execute_operation(domain=args.domain, operation=args.operation, body=body)
    emit(args, answer, _exec_human)
    if isinstance(answer, dict) and answer.get("status") == "dry_run" and not answer.get("valid"):
        return REFUSED
    return 0


# -- import ------------------------------------------------------------------------------------------


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help='a JSON file: {"records": [{"kind", "values"}], "links": [...]}'
    )
    parser.add_argument("--batch-size", type=int, default=5000, help="records plus links per request")
    parser.add_argument("--source", default="", help="where the data came from (default: the file name)")
    parser.add_argument("--message", default="", help="the commit message of each batch")
    parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


class Progress:
    """A one-line progress bar on a terminal; silent elsewhere (scripts and logs)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total, self.stream, self.done = max(total, 1), stream, 0
        self.enabled = enabled and stream.isatty()
        self.started = time.monotonic()

    def advance(self, count: int) -> None:
        self.done += count
        if not self.enabled:
            return
        share = self.done / self.total
        bar = "#" * int(share * 30)
        rate = self.done / max(time.monotonic() - self.started, 1e-6)
        self.stream.write(f"\r[{bar:<30}] {self.done}/{self.total} items ({rate:.0f}/s)")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def batches(document: dict[str, Any], size: int) -> list[dict[str, list[Any]]]:
    """Records first, then Links (their ends exist by then), at most `size` items per batch."""
    records, links = document.get("records") or [], document.get("links") or []
    if not isinstance(records, list) or not isinstance(links, list):
        raise Usage("records and links must be JSON arrays")
    out: list[dict[str, list[Any]]] = []
    for member, items in (("records", records), ("links", links)):
        for start in range(0, len(items), size):
            out.append({member: items[start : start + size]})
    return out


@client_command("import", "load Records and Links from a JSON file, in batches", _import_arguments)
async def _import(client: RestClient, args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise Usage("--batch-size must be at least 1")
    path = Path(args.file)
    raw = read_file(args.file)
    document = json_object_argument(raw.decode("utf-8", errors="replace"), str(path))
    unknown = set(document) - {"records", "links", "source", "message"}
    if unknown:
        raise Usage(f"{path}: unknown members {sorted(unknown)}; an import file has records and links")
    parts = batches(document, args.batch_size)
    digest = hashlib.sha256(raw).hexdigest()[:24]
    source = args.source or document.get("source") or path.name
    message = args.message or document.get("message") or f"Import of {path.name}"
    progress = Progress(sum(len(next(iter(p.values()))) for p in parts), sys.stderr, not args.no_progress)
    answers: list[Any] = []
    try:
        for index, part in enumerate(parts, start=1):
            body: dict[str, Any] = {**part, "source": source, "message": f"{message} ({index}/{len(parts)})"}
            if len(parts) == 1:
                body["message"] = message
            if args.branch:
                body["branch"] = args.branch
            # The same file, batch and size give the same key: a re-run after a failure skips what landed.
            key = f"import-{digest}-{args.batch_size}-{index}"
            answers.append(await client.import_data(domain=args.domain, body=body, idempotency_key=key))
            progress.advance(len(next(iter(part.values()))))
    finally:
        progress.close()
    summary = {
        "status": "committed",
        "batches": len(parts),
        "records": sum(a.get("received", {}).get("records", 0) for a in answers),
        "links": sum(a.get("received", {}).get("links", 0) for a in answers),
        "changed": {
            "records": sum(a.get("changed", {}).get("records", 0) for a in answers),
            "links": sum(a.get("changed", {}).get("links", 0) for a in answers),
        },
        "head": answers[-1].get("head") if answers else None,
        "revisions": [a.get("revision") for a in answers],
    }
    emit(
        args,
        summary,
        lambda s: (
            f"imported {s['records']} records and {s['links']} links in {s['batches']} batches "
            f"({s['changed']['records']} records and {s['changed']['links']} links changed); "
            f"head {short(s['head'])}"
        ),
    )
    return 0


# -- sync and embedding ------------------------------------------------------------------------------


def _sync_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SOURCE", help="a Source of the schema")
    parser.add_argument("file", metavar="FILE", help="the listing: a JSON file with records and links")
    parser.add_argument("--mode", choices=["full", "incremental"], default="full")
    parser.add_argument("--branch", default="")
    parser.add_argument("--idempotency-key", default="")


@client_command("sync", "deliver a Source's Records and Links (one Revision)", _sync_arguments)
async def _sync(client: RestClient, args: argparse.Namespace) -> int:
    body = json_object_argument("@" + args.file, args.file)
    body["mode"] = args.mode
    if args.branch:
        body["branch"] = args.branch
    answer = await client.sync_source(
        domain=args.domain, source=args.source, body=body, idempotency_key=args.idempotency_key
    )
    emit(
        args, answer, lambda a: f"sync {a.get('sync')} ({a.get('mode')}): revision {short(a.get('revision'))}"
    )
    return 0


def _embedding_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", metavar="KIND")
    parser.add_argument("key", metavar="KEY")
    parser.add_argument("vector", metavar="VECTOR", help="the vector as a JSON array, @FILE or -")
    parser.add_argument("--model", required=True, help="the model that computed it")
    parser.add_argument("--branch", default="")


@client_command("embedding", "set the embedding of a Record (computed by your model)", _embedding_arguments)
async def _embedding(client: RestClient, args: argparse.Namespace) -> int:
    vector = json_argument(args.vector, "VECTOR")
    if not isinstance(vector, list):
        raise Usage("VECTOR must be a JSON array of numbers")
    answer = await client.set_embedding(
        domain=args.domain, kind=args.kind, key=args.key, vector=vector, model=args.model, branch=args.branch
    )
    emit(args, answer, lambda a: fields(a.items()))
    return 0
