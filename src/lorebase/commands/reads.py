"""Read commands: context, search, query, resolve, record, links, neighborhood, traverse,
health and diff (docs/cli.md; the REST calls are in docs/rest.md and the seed's agent guide)."""

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
    fields,
    json_object_argument,
    short,
    table,
)


def _ref(text: str) -> str:
    kind, slash, key = text.partition("/")
    if not slash or not kind or not key:
        raise Usage(f"{text!r} is not a reference: write KIND/KEY, as in Supplier/S-1001")
    return text


def _branch_at(parser: argparse.ArgumentParser, *, at: bool = True) -> None:
    parser.add_argument("--branch", default="", help="the branch (default: the Domain's default branch)")
    if at:
        parser.add_argument(
            "--at", default="", metavar="REV", help="as of this Revision (or a prefix of 12+)"
        )


def _values(values: Any) -> str:
    if not isinstance(values, dict):
        return ""
    return "; ".join(f"{name}={cell(value, 40)}" for name, value in values.items())


# -- context -----------------------------------------------------------------------------------------


def _context_arguments(parser: argparse.ArgumentParser) -> None:
    seeds = parser.add_mutually_exclusive_group(required=True)
    seeds.add_argument("--refs", help="seed Records: KIND/KEY[,KIND/KEY...]")
    seeds.add_argument("--search", metavar="TEXT", help="seed Records found by this text")
    seeds.add_argument("--query", metavar="JSON", help="seed Records of a query (JSON, @FILE or -)")
    parser.add_argument("--lens", help="a lens of the schema (its Kinds, Relations, depth and budget)")
    parser.add_argument("--trait", action="append", help="limit neighbors and seeds to a Trait's Kinds")
    parser.add_argument("--relations", help="Relation names to follow, comma-separated")
    parser.add_argument("--depth", type=int, help="neighborhood depth (0: the seeds alone)")
    parser.add_argument("--budget", type=int, metavar="TOKENS", help="estimated token budget")
    parser.add_argument("--since", help="recent changes after this Revision")
    parser.add_argument("--markdown", action="store_true", help="print the Markdown pack (for a prompt)")
    _branch_at(parser, at=False)


def _context_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if args.refs:
        body["refs"] = [_ref(ref) for ref in csv_list(args.refs)]
    elif args.search:
        body["search"] = args.search
    else:
        body["query"] = json_object_argument(args.query, "--query")
    for member, value in (
        ("lens", args.lens),
        ("traits", args.trait),
        ("relations", csv_list(args.relations) or None),
        ("depth", args.depth),
        ("budget_tokens", args.budget),
        ("since", args.since),
        ("branch", args.branch),
    ):
        if value not in (None, ""):
            body[member] = value
    return body


def _context_human(pack: Any) -> str:
    budget = pack.get("budget") or {}
    head = (
        f"Context: {pack.get('domain')}/{pack.get('branch')} at {short(pack.get('revision'))}; "
        f"{budget.get('used_tokens')} of {budget.get('limit_tokens')} tokens"
    )
    if budget.get("trimmed"):
        head += f"; trimmed: {cell(budget['trimmed'])}"
    seeds = table(
        [{**s, "values": _values(s.get("values"))} for s in pack.get("seeds", [])], ["ref", "title", "values"]
    )
    neighbors = table(
        [{**n, "values": _values(n.get("values"))} for n in pack.get("neighbors", [])],
        ["ref", "title", "depth", "values"],
    )
    links = sum(len(v) for v in (pack.get("links") or {}).values())
    return (
        f"{head}\n\nSeeds\n{seeds}\n\nNeighbors\n{neighbors}\n\nLinks: {links} (--markdown or --json for all)"
    )


@client_command(
    "context", "a context pack: seed Records, their neighborhood, schema and changes", _context_arguments
)
async def _context(client: RestClient, args: argparse.Namespace) -> int:
    body = _context_body(args)
    if args.markdown and not args.json:
        print(await client.context(domain=args.domain, body={**body, "format": "markdown"}))
        return 0
    emit(args, await client.context(domain=args.domain, body=body), _context_human)
    return 0


# -- search, query, resolve --------------------------------------------------------------------------


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the words to look for")
    parser.add_argument("--kind", action="append", help="search this Kind (repeat for several)")
    parser.add_argument("--trait", action="append", help="search the Kinds implementing this Trait")
    parser.add_argument("--lens", help="search the Kinds of this lens (unless --kind or --trait)")
    parser.add_argument("--limit", type=int, help="at most this many results")
    _branch_at(parser, at=False)


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
    _branch_at(parser)


def _query_human(answer: Any) -> str:
    aggregate = answer.get("aggregate")
    if aggregate is not None:
        if "groups" in aggregate:
            grouped = table(aggregate["groups"], ["value", "count"])
            return f"{grouped}\n\ncount: {aggregate.get('count')}"
        return f"count: {aggregate.get('count')}"
    rows = [{**r, "values": _values(r.get("values"))} for r in answer.get("records", [])]
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
    _branch_at(parser)


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


# -- revision ----------------------------------------------------------------------------------------


def _revision_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("revision", metavar="REV", help="a Revision id, a prefix of 12+, or a tag")
    parser.add_argument("--limit", type=int, default=0, help="changes per page")
    parser.add_argument("--cursor", default="", help="the next_cursor of the previous page")
    _branch_at(parser, at=False)


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
        _branch_at(parser)

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


# -- record ------------------------------------------------------------------------------------------


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["get", "history", "lineage", "explain"], help="what to read")
    parser.add_argument("kind", metavar="KIND")
    parser.add_argument("key", metavar="KEY")
    parser.add_argument("--values", action="store_true", help="history: the values before and after")
    parser.add_argument("--limit", type=int, default=0, help="history: changes per page")
    parser.add_argument("--cursor", default="", help="history: the next_cursor of the previous page")
    parser.add_argument("--markdown", action="store_true", help="explain: the Markdown (the default)")
    _branch_at(parser)


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


# -- links, neighborhood, traverse -------------------------------------------------------------------


def _links_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", metavar="KIND")
    parser.add_argument("key", metavar="KEY")
    parser.add_argument("relation", metavar="RELATION", help="a Relation's name or its inverse name")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--cursor", default="")
    _branch_at(parser)


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
    _branch_at(parser)


def _walk_human(answer: Any) -> str:
    records = answer.get("records") or answer.get("results") or []
    return table(records, ["ref", "title", "depth"]) if isinstance(records, list) else cell(answer, 400)


@client_command("neighborhood", "the graph around some Records (POST /neighborhood)", _walk_arguments)
async def _neighborhood(client: RestClient, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"refs": [_ref(r) for r in args.refs], "values": not args.headers}
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
    body: dict[str, Any] = {"from": [_ref(r) for r in args.refs], "path": csv_list(args.path)}
    for member, value in (("branch", args.branch), ("at", args.at)):
        if value:
            body[member] = value
    emit(args, await client.traverse(domain=args.domain, body=body), _walk_human)
    return 0


# -- health and diff ---------------------------------------------------------------------------------


def _health_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", nargs="?", metavar="KIND", help="one Kind only")
    parser.add_argument("--markdown", action="store_true", help="the Markdown report")
    _branch_at(parser)


def _health_human(report: Any) -> str:
    summary = report.get("summary") or {}
    state = "ok" if summary.get("ok") else "needs attention"
    head = f"Health of {report.get('domain')} on {report.get('branch')} at {short(report.get('revision'))}: {state}"
    counts = ", ".join(f"{k} {v}" for k, v in summary.items() if k != "ok")
    kinds = table(
        [{**k, "last_change": short(k.get("last_change"))} for k in report.get("kinds", [])],
        ["kind", "records", "invalid", "duplicate_groups", "last_change"],
    )
    relations = table(report.get("relations", []), ["relation", "links", "orphans", "gaps"])
    return f"{head}\n{counts}\n\nKinds\n{kinds}\n\nRelations\n{relations}"


@client_command("health", "the health of the data: violations, duplicates, orphans, gaps", _health_arguments)
async def _health(client: RestClient, args: argparse.Namespace) -> int:
    markdown = args.markdown and not args.json
    form = "markdown" if markdown else ""
    if args.kind:
        answer = await client.get_kind_health(**call_arguments("get_kind_health", args, format=form))
    else:
        answer = await client.get_health(**call_arguments("get_health", args, format=form))
    if markdown:
        print(answer)
    else:
        emit(args, answer, _health_human)
    return 0


def _diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("from_revision", metavar="FROM", help="the earlier Revision")
    parser.add_argument("to_revision", metavar="TO", help="the later Revision")
    _branch_at(parser, at=False)


def _diff_human(answer: Any) -> str:
    rows: list[dict[str, Any]] = []
    for entity in ("records", "links"):
        section = answer.get(entity) or {}
        for change in ("added", "removed", "changed"):
            for item in section.get(change, []):
                ref = item.get("ref") or f"{item.get('relation')}: {item.get('from')} -> {item.get('to')}"
                rows.append(
                    {
                        "change": change,
                        "entity": entity[:-1],
                        "ref": ref,
                        "attributes": item.get("attributes"),
                        "after": item.get("after") or item.get("values"),
                    }
                )
    head = f"{short(answer.get('from'))} -> {short(answer.get('to'))} on {answer.get('branch')}"
    return head + "\n" + table(rows, ["change", "entity", "ref", "attributes", "after"], empty="(no changes)")


@client_command("diff", "what changed between two Revisions of a branch", _diff_arguments)
async def _diff(client: RestClient, args: argparse.Namespace) -> int:
    answer = await client.diff(**call_arguments("diff", args))
    emit(args, answer, _diff_human)
    return 0
