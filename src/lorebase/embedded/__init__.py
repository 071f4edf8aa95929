"""Real PostgreSQL and NATS servers from the PyPI wheels, run as child processes on loopback ports.

`lorebase up` starts them when no LOREBASE_DATABASE_URL / LOREBASE_NATS_URL is set, and the test
fixtures start them once per session. Both keep their data in a directory of their own, so a second
start on the same directory finds the data again.
"""

from __future__ import annotations

from lorebase.embedded._process import EmbeddedServerError, free_port, owned_child
from lorebase.embedded.credentials import kept_secret
from lorebase.embedded.databases import (
    create_database,
    database_url,
    drop_database,
    prepare_app_database,
    role_url,
)
from lorebase.embedded.nats import EmbeddedNats, nats_server_binary
from lorebase.embedded.postgres import (
    POSTGRES_SYSTEM_USER,
    EmbeddedPostgres,
    own_for_server,
    postgres_bin_dir,
    server_user_options,
)

__all__ = [
    "POSTGRES_SYSTEM_USER",
    "EmbeddedNats",
    "EmbeddedPostgres",
    "EmbeddedServerError",
    "create_database",
    "database_url",
    "drop_database",
    "free_port",
    "kept_secret",
    "nats_server_binary",
    "own_for_server",
    "owned_child",
    "postgres_bin_dir",
    "prepare_app_database",
    "role_url",
    "server_user_options",
]
