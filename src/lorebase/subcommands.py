"""The registry of `lorebase` subcommands: `COMMANDS`, filled by `@command(...)` as modules import.

A subcommand is a function `(args, settings) -> exit code` plus, optionally, a function that adds its
arguments to its parser. lorebase.cli registers the stack's own commands and then imports
lorebase.commands (the REST client commands); both register here, so neither imports the other back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from lorebase.config import Settings

Handler = Callable[[argparse.Namespace, Settings], int]
Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Handler
    arguments: Arguments | None = None
    needs_settings: bool = True


COMMANDS: dict[str, Command] = {}


def command(
    name: str, help: str, arguments: Arguments | None = None, *, needs_settings: bool = True
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the subcommand `name`. A command that `needs_settings`
    reads the settings file and LOREBASE_* settings first; the REST client commands do not."""

    def register(run: Handler) -> Handler:
        if name in COMMANDS:
            raise ValueError(f"subcommand {name!r} is registered twice")
        COMMANDS[name] = Command(name, help, run, arguments, needs_settings)
        return run

    return register


__all__ = ["COMMANDS", "Arguments", "Command", "Handler", "command"]
