"""The `record` command: one Record, read whole (`get`), as its history, its lineage (where each
value came from, with extraction evidence) or explained.
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
    short,
    table,
)
from lorebase.commands.reads._common import branch_at


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["get", "history", "lineage", "explain"], help="what to read")
    parser.add_argument("kind", metavar="KIND")
    parser.add_argument("key", metavar="KEY")
    parser.add_argument("--values", action="store_true", help="history: the values before and after")
    parser.add_argument("--limit", type=int, default=0, help="history: changes per page")
    parser.add_argument("--cursor", default="", help="history: the next_cursor of the previous page")
    parser.add_argument("--markdown", action="store_true", help="explain: the Markdown (the default)")
    branch_at(parser)


def _record_human(answer: Any) -> str:
    lines = [
        f"{answer.get('ref')}: {answer.get('title')}  (revision {short(answer.get('updated_revision'))})"
    ]
    lines.append(fields((answer.get("values") or {}).items()))
    if answer.get("redacted"):
        lines.append(f"redacted: {', '.join(answer['redacted'])}")
    if answer.get("links"):
        lines.append("links: " + ", ".join(f"{k} {v}" for k, v in answer["links"].items()))
    return "\n".join(lines)


def _evidence_lines(evidence: dict[str, dict[str, Any]]) -> list[str]:
    """Extraction evidence by Attribute, one line each (docs/provenance.md)."""
    lines = []
    for name, e in evidence.items():
        span = e.get("span") or {}
        where = f"{span['start']}-{span['end']}" if span.get("start") is not None else ""
        quote = f' "{span["quote"]}"' if span.get("quote") else ""
        confidence = "" if e.get("confidence") is None else f" confidence {e['confidence']}"
        lines.append(
            f"  {name}: {e.get('document')} [{where}]{quote} model {e.get('model')} prompt "
            f"{e.get('prompt_version')} extractor {e.get('extractor')}{confidence}"
        )
    return lines


def _history_human(answer: Any) -> str:
    rows = [{**c, "revision": short(c.get("revision"))} for c in answer.get("changes", [])]
    text = table(rows, ["revision", "at", "author", "change", "attributes", "message"])
    for change in answer.get("changes", []):
        evidence = {
            name: p["extraction"]
            for name, p in (change.get("provenance") or {}).items()
            if p.get("extraction")
        }
        if evidence:
            text += f"\n\nextracted in {short(change.get('revision'))}:\n" + "\n".join(
                _evidence_lines(evidence)
            )
    merged = [c for c in answer.get("changes", []) if c.get("merged_into")]
    for change in merged:  # a reconciliation merge removed this Record (docs/reconciliation.md)
        text += f"\n\nmerged into {change['merged_into']} by {short(change.get('revision'))}"
    if answer.get("next_cursor"):
        text += f"\n\nmore: --cursor {answer['next_cursor']}"
    return text


def _lineage_human(answer: Any) -> str:
    rows = [
        {"attribute": name, **entry, "revision": short(entry.get("revision")), "origin": _origin(entry)}
        for name, entry in (answer.get("attributes") or {}).items()
    ]
    text = table(rows, ["attribute", "value", "revision", "actor", "at", "origin"])
    evidence = {
        name: entry["extraction"]
        for name, entry in (answer.get("attributes") or {}).items()
        if entry.get("extraction")
    }
    if evidence:
        text += "\n\nextraction evidence:\n" + "\n".join(_evidence_lines(evidence))
    return text


def _origin(entry: dict[str, Any]) -> str:
    origin = entry.get("origin") or {}
    text = f"{origin.get('type', '')} {origin.get('ref', '')}".strip()
    if entry.get("merged_from"):  # taken from a Record a reconciliation merge removed
        text += f" (merged from {entry['merged_from']})"
    return text


@client_command("record", "one Record: get, history, lineage or explain KIND KEY", _record_arguments)
async def _record(client: RestClient, args: argparse.Namespace) -> int:
    if args.action == "get":
        answer = await client.get_record(**call_arguments("get_record", args, links=True))
        emit(args, answer, _record_human)
    elif args.action == "history":
        emit(args, await client.get_history(**call_arguments("get_history", args)), _history_human)
    elif args.action == "lineage":
        emit(args, await client.get_lineage(**call_arguments("get_lineage", args)), _lineage_human)
    elif args.json:
        emit(args, await client.explain(**call_arguments("explain", args)), str)
    else:
        print(await client.explain(**call_arguments("explain", args, format="markdown")))
    return 0
