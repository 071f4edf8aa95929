"""The private names of other libraries that Lorebase uses are still there, one test per library
and each use kept in one module: asyncpg's and SQLAlchemy's asyncpg adapter's
(lorebase_store.asyncpg_internals), nats-py's (lorebase_feed.relay) and uvicorn's
(lorebase_gateway.http_protocol). pyproject.toml pins each below its next minor version; raising a
pin means running these first."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# library -> the module that is the only one to use its private names
HOMES = {
    "asyncpg": "src/lorebase_store/asyncpg_internals.py",
    "sqlalchemy": "src/lorebase_store/asyncpg_internals.py",
    "nats-py": "services/feed/lorebase_feed/relay.py",
    "uvicorn": "services/gateway/lorebase_gateway/http_protocol.py",
}


def _slots(cls: type) -> set[str]:
    return {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}


def _sets(cls: type, name: str) -> bool:
    """Whether `cls` (or a base) declares `name` as a slot or assigns it in __init__."""
    if name in _slots(cls):
        return True
    return any(
        re.search(rf"self\.{name}\s*[:=]", inspect.getsource(vars(klass)["__init__"])) is not None
        for klass in cls.__mro__
        if "__init__" in vars(klass) and inspect.isfunction(vars(klass)["__init__"])
    )


def test_asyncpg_and_the_sqlalchemy_adapter() -> None:
    from asyncpg.connection import Connection
    from asyncpg.transaction import Transaction, TransactionState
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
    from sqlalchemy.pool import Pool

    assert _sets(Connection, "_top_xact")
    assert "_state" in _slots(Transaction) and TransactionState.STARTED
    assert _sets(AsyncAdapt_asyncpg_connection, "_transaction")
    assert _sets(AsyncAdapt_asyncpg_connection, "_connection")
    assert inspect.iscoroutinefunction(AsyncAdapt_asyncpg_connection._start_transaction)
    assert callable(Pool._invalidate)


def test_nats_jetstream_context_keeps_its_connection() -> None:
    from nats.js import JetStreamContext

    connection: Any = object()
    assert JetStreamContext(connection)._nc is connection


def test_uvicorn_httptools_protocol() -> None:
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

    assert STATUS_LINE[413].startswith(b"HTTP/1.1 413")
    for method in (
        "connection_made",
        "on_response_complete",
        "on_message_begin",
        "data_received",
        "on_header",
        "on_headers_complete",
        "on_body",
        "on_message_complete",
        "connection_lost",
    ):
        assert callable(getattr(HttpToolsProtocol, method)), method
    assert _sets(HttpToolsProtocol, "pipeline") and _sets(HttpToolsProtocol, "cycle")


def test_each_library_is_pinned_below_its_next_minor() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for library in HOMES:
        (requirement,) = [d for d in dependencies if re.split(r"[<>=\[ ]", d, maxsplit=1)[0] == library]
        assert re.search(r",<\d+\.\d+", requirement), f"{requirement}: pin it below its next minor"


def test_private_names_are_used_in_their_home_only() -> None:
    uses = {
        "asyncpg": r"_top_xact|\._state\b|TransactionState",
        "sqlalchemy": r"_start_transaction|\._transaction\b|pool\._invalidate|dbapi_connection\._connection",
        "nats-py": r"\bjs\._nc\b",
        "uvicorn": r"HttpToolsProtocol|STATUS_LINE",
    }
    for library, pattern in uses.items():
        found = {
            str(path.relative_to(ROOT))
            for top in ("src", "services")
            for path in (ROOT / top).rglob("*.py")
            if "/v1/" not in str(path) and re.search(pattern, path.read_text())
        }
        assert found <= {HOMES[library]}, (library, found)
