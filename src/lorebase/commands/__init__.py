"""The `lorebase` commands that talk REST to a running stack (docs/cli.md). Importing the package
registers them in `lorebase.subcommands.COMMANDS`; each module is one family of commands."""

from lorebase.clients.rest import REST_ONLY
from lorebase.commands import admin, feed, herald, reads, reconciliation, review, schema, writes
from lorebase.commands._runtime import AUTH, NOT_FOUND, OK, REFUSED, UNAVAILABLE, USAGE, exit_code

# REST endpoints with no command, each with the reason; the parity test (tests/unit/test_parity.py)
# fails on an endpoint that is neither called by a command nor listed here.
NOT_IN_CLI: dict[str, str] = {**REST_ONLY}

__all__ = [
    "NOT_IN_CLI",
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
    "reconciliation",
    "review",
    "schema",
    "writes",
]
