"""The `lorebase` commands that talk REST to a running stack (docs/cli.md). Importing the package
registers them in `lorebase.subcommands.COMMANDS`; each module is one family of commands."""

from lorebase.commands import admin, feed, herald, reads, review, writes
from lorebase.commands._runtime import AUTH, NOT_FOUND, OK, REFUSED, UNAVAILABLE, USAGE, exit_code

_MEMORY = "agent memory has its own consumer protocol (docs/memory.md) and is used by agents over REST"

# REST client methods (one per route) with no command, each with the reason; the parity test
# (tests/unit/test_parity.py) fails on a route that is neither used by a command nor listed here.
NOT_IN_CLI: dict[str, str] = {
    name: _MEMORY
    for name in (
        "create_memory",
        "derive_memory",
        "update_memory",
        "delete_memory",
        "attach_memory_embedding",
        "review_memory",
        "get_memory",
        "query_memory",
        "create_memory_grant",
        "delete_memory_grant",
        "read_memory_changes",
        "save_memory_checkpoint",
        "get_memory_checkpoint",
        "list_memory_checkpoints",
        "delete_memory_checkpoint",
    )
}

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
    "review",
    "writes",
]
