"""What every client command shares: the common options, the REST client, exit codes, output.

A client command is `async def run(client, args) -> int | None`, registered with `@client_command`.
It talks REST to LOREBASE_URL with LOREBASE_KEY (docs/cli.md). Problems from the gateway print their
title and detail (and issues) on stderr and map to an exit code; with `--json` the problem document
is printed on stdout too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from lorebase.clients.rest import DEFAULT_DOMAIN, RestClient, RestSettings
from lorebase.config import Settings
from lorebase.contract import BY_NAME
from lorebase.problems import Problem
from lorebase.subcommands import Arguments, command

# Exit codes (docs/cli.md).
OK = 0
USAGE = 1  # bad arguments or input: fix the command line (HTTP 400, 413, 415, 422 too)
NOT_FOUND = 2  # HTTP 404
REFUSED = 3  # HTTP 409 (conflict, review required, stale head), or a dry run that is not valid
AUTH = 4  # HTTP 401, 403
UNAVAILABLE = 5  # the gateway is unreachable, or answered 429 or 5xx
INTERRUPTED = 130


class Usage(Exception):
    """Bad input on the command line: printed as `lorebase CMD: message`, exit code 1."""


def exit_code(problem: Problem) -> int:
    status = problem.status
    if status == 404:
        return NOT_FOUND
    if status == 409:
        return REFUSED
    if status in (401, 403):
        return AUTH
    if status in (400, 405, 412, 413, 415, 422):
        return USAGE
    return UNAVAILABLE


ClientRun = Callable[[RestClient, argparse.Namespace], Awaitable[int | None]]


def common_arguments(parser: argparse.ArgumentParser, *, domain: bool = True) -> None:
    group = parser.add_argument_group(
        "connection and output",
        "The API key is read from the environment variable LOREBASE_KEY (never from an argument, so "
        "that it stays out of shell history and process lists); LOREBASE_SESSION names an agent session.",
    )
    group.add_argument("--url", help="the gateway (default: LOREBASE_URL, else http://127.0.0.1:8080)")
    if domain:
        group.add_argument(
            "--domain",
            default=None,
            help=f"the Domain (default: LOREBASE_DOMAIN, else {DEFAULT_DOMAIN})",
        )
    group.add_argument("--json", action="store_true", help="print the answer as JSON (for scripts)")


def client_command(
    name: str, help: str, arguments: Arguments | None = None, *, domain: bool = True
) -> Callable[[ClientRun], ClientRun]:
    """Register `run` as the client subcommand `name` (it needs no settings file, only the env)."""

    def with_common(parser: argparse.ArgumentParser) -> None:
        if arguments is not None:
            arguments(parser)
        common_arguments(parser, domain=domain)

    def register(run: ClientRun) -> ClientRun:
        def handler(args: argparse.Namespace, settings: Settings) -> int:
            return invoke(name, run, args)

        command(name, help, with_common, needs_settings=False)(handler)
        return run

    return register


def domain_of(args: argparse.Namespace) -> str:
    return str(getattr(args, "domain", None) or os.environ.get("LOREBASE_DOMAIN") or DEFAULT_DOMAIN)


def invoke(name: str, run: ClientRun, args: argparse.Namespace) -> int:
    settings = RestSettings.from_env(url=getattr(args, "url", None))
    args.domain = domain_of(args)

    async def main() -> int:
        async with RestClient(settings) as client:
            code = await run(client, args)
            return OK if code is None else code

    try:
        return asyncio.run(main())
    except Usage as exc:
        print(f"lorebase {name}: {exc}", file=sys.stderr)
        return USAGE
    except Problem as problem:
        report_problem(problem, as_json=bool(getattr(args, "json", False)))
        return exit_code(problem)
    except KeyboardInterrupt:
        # Ctrl-C is how `events --follow` ends: a normal end. Elsewhere it interrupts (130).
        return OK if getattr(args, "follow", False) else INTERRUPTED
    except BrokenPipeError:
        return OK


def call_arguments(endpoint: str, args: argparse.Namespace, **given: Any) -> dict[str, Any]:
    """The keywords of a call of `endpoint` (lorebase.contract): each of its parameters from the
    parsed argument of the same name, then `given`. A command names its arguments like the
    endpoint's parameters, so that none copies them one by one."""
    taken = {p.name: getattr(args, p.name) for p in BY_NAME[endpoint].parameters if hasattr(args, p.name)}
    return {**taken, **given}


def report_problem(problem: Problem, *, as_json: bool) -> None:
    detail = problem.detail
    if problem.status == 401:  # the server's advice is about the HTTP header; a CLI user sets the env
        detail = f"{detail} (the CLI sends the key in LOREBASE_KEY: export LOREBASE_KEY=<key>)"
    print(f"lorebase: {problem.title} ({problem.status} {problem.code}): {detail}", file=sys.stderr)
    for issue in problem.extra.get("issues") or []:
        if isinstance(issue, dict):
            where = issue.get("path") or "-"
            print(f"  {where}: {issue.get('message', '')} [{issue.get('rule', '')}]", file=sys.stderr)
    for hint in problem.extra.get("next") or []:
        if isinstance(hint, dict):
            print(f"  next: {hint.get('action', '')}: {hint.get('detail', '')}", file=sys.stderr)
    if as_json:
        print(json.dumps(problem.document(), indent=2, ensure_ascii=False))


# -- input -------------------------------------------------------------------------------------------


def json_argument(text: str, what: str) -> Any:
    """A JSON document given inline, as `@FILE`, as a path to a file, or `-` for stdin."""
    source = text
    if text == "-":
        source = sys.stdin.read()
    elif text.startswith("@") or (not text.lstrip().startswith(("{", "[")) and _is_file(text)):
        path = Path(text[1:] if text.startswith("@") else text)
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise Usage(f"cannot read {what} from {path}: {exc.strerror}") from exc
    try:
        return json.loads(source)
    except json.JSONDecodeError as exc:
        raise Usage(f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def json_object_argument(text: str, what: str) -> dict[str, Any]:
    value = json_argument(text, what)
    if not isinstance(value, dict):
        raise Usage(f"{what} must be a JSON object")
    return value


def parameters(pairs: Sequence[str] | None) -> dict[str, Any]:
    """`k=v` (a string) and `k:=JSON` (any JSON value), as httpie reads them."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if ":=" in pair and ("=" not in pair or pair.index(":=") < pair.index("=")):
            name, _, raw = pair.partition(":=")
            try:
                value: Any = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise Usage(f"--param {pair}: the value after := is not JSON ({exc.msg})") from exc
        elif "=" in pair:
            name, _, value = pair.partition("=")
        else:
            raise Usage(f"--param {pair}: write NAME=VALUE (a string) or NAME:=JSON")
        if not name:
            raise Usage(f"--param {pair}: the name is empty")
        out[name] = value
    return out


def read_file(name: str) -> bytes:
    """The bytes of a file named on the command line (Usage when it cannot be read)."""
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise Usage(f"cannot read {name}: {exc.strerror}") from exc


def csv_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


# -- output ------------------------------------------------------------------------------------------


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str | None]) -> None:
    """Print `data` as JSON with --json, else its human rendering."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    text = human(data)
    if text:
        print(text.rstrip("\n"))


def short(revision: Any) -> str:
    return str(revision)[:12] if revision else "-"


def cell(value: Any, width: int = 60) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        text = ", ".join(str(v) for v in value)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: Iterable[dict[str, Any]], columns: Sequence[str], *, empty: str = "(none)") -> str:
    """A plain aligned text table; each cell is one line, cut at 60 characters."""
    cells = [[cell(row.get(column)) for column in columns] for row in rows]
    if not cells:
        return empty
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = ["  ".join(column.upper().ljust(widths[i]) for i, column in enumerate(columns)).rstrip()]
    lines += ["  ".join(value.ljust(widths[i]) for i, value in enumerate(line)).rstrip() for line in cells]
    return "\n".join(lines)


def fields(pairs: Iterable[tuple[str, Any]]) -> str:
    """`name: value` lines, names aligned."""
    items = [(name, cell(value, 200)) for name, value in pairs]
    width = max((len(name) for name, _ in items), default=0)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in items)


__all__ = [
    "AUTH",
    "NOT_FOUND",
    "OK",
    "REFUSED",
    "UNAVAILABLE",
    "USAGE",
    "Usage",
    "call_arguments",
    "cell",
    "client_command",
    "csv_list",
    "domain_of",
    "emit",
    "exit_code",
    "fields",
    "json_argument",
    "json_object_argument",
    "parameters",
    "read_file",
    "short",
    "table",
]
