"""The `lorebase` commands that talk REST to a running stack (docs/cli.md). Importing the package
registers them in `lorebase.cli.COMMANDS`; each module is one family of commands."""

from lorebase.commands import admin, feed, herald, reads, review, writes
from lorebase.commands._runtime import AUTH, NOT_FOUND, OK, REFUSED, UNAVAILABLE, USAGE, exit_code

__all__ = [
    "AUTH",
    "NOT_FOUND",
    "OK",
    "REFUSED",
    "UNAVAILABLE",
    "USAGE",
    "admin",
    "exit_code",
    "feed",
    "herald",
    "reads",
    "review",
    "writes",
]
