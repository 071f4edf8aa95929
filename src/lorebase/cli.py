"""The `lorebase` command: one subcommand per job, each registered in COMMANDS by `@command(...)`
(lorebase.subcommands): the stack's own here, then the REST client commands (lorebase.commands).

Settings are read after parsing, so `--help` works with broken settings.
Service modules are imported inside the handlers: `lorebase up` does not load the services' code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from lorebase import __version__
from lorebase.config import Settings, SettingsError, load_settings
from lorebase.subcommands import COMMANDS, Command, Handler, command

# -- the stack ---------------------------------------------------------------------------------------


def _up_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--example", metavar="NAME", help="create this example Domain (from examples/) unless it exists"
    )


@command(
    "up",
    "run the whole stack (embedded PostgreSQL and NATS unless configured); Ctrl-C stops it",
    _up_arguments,
)
def _up(args: argparse.Namespace, settings: Settings) -> int:
    from lorebase.supervisor import up

    return up(settings, example=args.example)


@command("migrate", "migrate the database at database.url (LOREBASE_DATABASE_URL) to the newest schema")
def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    url = settings.model.database.url
    if not url:
        print("lorebase migrate: set database.url (LOREBASE_DATABASE_URL)", file=sys.stderr)
        return 2
    from lorebase_store.migrate import upgrade

    upgrade(url)
    return 0


# -- one service per process -------------------------------------------------------------------------

SERVICE_MODULES = {
    "keeper": "lorebase_keeper.server",
    "feed": "lorebase_feed.server",
    "scribe": "lorebase_scribe.server",
    "gateway": "lorebase_gateway.server",
}


def _service(module: str) -> Handler:
    def run(args: argparse.Namespace, settings: Settings) -> int:
        main: Callable[[Settings], int] = importlib.import_module(module).main
        return main(settings)

    return run


def _register_services() -> None:
    for name, module in SERVICE_MODULES.items():
        command(name, f"run the {name} service alone (`lorebase up` starts each of them)")(_service(module))


_register_services()


def _register_client_commands() -> None:
    """The commands that talk REST to a running stack (lorebase.commands, docs/cli.md)."""
    importlib.import_module("lorebase.commands")


_register_client_commands()


# -- entry point -------------------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """argparse with exit code 1 for usage errors (docs/cli.md: 2 means "not found")."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="lorebase",
        description="Shared, versioned knowledge for AI agents. docs/cli.md describes every command.",
        epilog="Client commands read LOREBASE_URL (the gateway), LOREBASE_KEY (the API key) and "
        "LOREBASE_DOMAIN from the environment.",
    )
    parser.add_argument("--version", action="version", version=f"lorebase {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for entry in COMMANDS.values():
        sub = subparsers.add_parser(entry.name, help=entry.help, description=entry.help)
        if entry.arguments is not None:
            entry.arguments(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    entry = COMMANDS[args.command]
    settings = Settings()
    if entry.needs_settings:
        try:
            settings = load_settings()
        except SettingsError as exc:
            print(f"lorebase: {exc}", file=sys.stderr)
            return 2
    try:
        return entry.run(args, settings)
    except KeyboardInterrupt:
        return 130


__all__ = ["COMMANDS", "Command", "build_parser", "command", "main"]
