"""The credentials `lorebase up` generates into its data dir, on the stack the README starts (issue
12, item 7): a local process without them can neither publish a forged event to the embedded NATS
nor connect to the embedded PostgreSQL, the services connect as a role that is not a superuser, and
creating a webhook works with the generated encryption key (it answered 409 encryption_key_required)."""

from __future__ import annotations

import stat

import asyncpg
import httpx
import psutil
import pytest

from tests.conftest import nats_publish_answer
from tests.e2e.running import Running, cmdline

pytestmark = [pytest.mark.e2e]

FILES = (
    "admin.key",  # absent here: LOREBASE_ADMIN_KEY is set for this stack
    "postgres-superuser.password",
    "postgres-lorebase.password",
    "nats.token",
    "nats.conf",
    "webhook.key",
)


def _port_of(running: Running, program: str) -> int:
    """The `-p` port of the stack's `program` (postgres, nats-server), found by its data dir."""
    for proc in psutil.process_iter():
        line = cmdline(proc)
        if line and line[0].endswith(f"/{program}") and any(str(running.data_dir) in part for part in line):
            return int(line[line.index("-p") + 1])
    raise AssertionError(f"no {program} runs on {running.data_dir}")


def _read(running: Running, name: str) -> str:
    return (running.data_dir / name).read_text().strip()


def test_generated_credentials_are_kept_readable_by_their_owner_only(running: Running) -> None:
    for name in FILES[1:]:
        assert stat.S_IMODE((running.data_dir / name).stat().st_mode) == 0o600, name
    assert not (running.data_dir / "admin.key").exists()


def test_a_local_process_cannot_publish_to_the_embedded_nats(running: Running) -> None:
    port = _port_of(running, "nats-server")
    assert nats_publish_answer(port) == "-ERR 'Authorization Violation'"
    assert nats_publish_answer(port, "guess") == "-ERR 'Authorization Violation'"
    # With the token it could: the refusal above is the credential's doing (a subject no stream keeps).
    assert nats_publish_answer(port, _read(running, "nats.token"), subject="lorebase.probe") == "PONG"


async def test_the_embedded_postgres_wants_a_password_and_the_services_are_no_superuser(
    running: Running,
) -> None:
    port = _port_of(running, "postgres")
    for user, database in (("postgres", "postgres"), ("lorebase", "lorebase")):
        for password in ("", "guess"):
            with pytest.raises(asyncpg.InvalidPasswordError):
                await asyncpg.connect(
                    host="127.0.0.1", port=port, user=user, password=password, database=database
                )
    password = _read(running, "postgres-lorebase.password")
    conn = await asyncpg.connect(
        host="127.0.0.1", port=port, user="lorebase", password=password, database="lorebase"
    )
    try:
        assert await conn.fetchval("select rolsuper from pg_roles where rolname = current_user") is False
        owner = await conn.fetchval("select tableowner from pg_tables where tablename = 'alembic_version'")
        assert owner == "lorebase"  # migrated by the role itself
    finally:
        await conn.close()


def test_a_webhook_can_be_created_with_the_generated_encryption_key(running: Running) -> None:
    admin = {"Authorization": f"Bearer {running.admin_key}"}
    with httpx.Client(base_url=running.url, headers=admin, timeout=30, trust_env=False) as http:
        response = http.post(
            "/api/v1/domains/supply/webhooks", json={"url": "https://hooks.example.com/lorebase"}
        )
        assert response.status_code == 201, response.text
        assert response.json()["secret"].startswith("lbwh_")
        assert http.delete(f"/api/v1/domains/supply/webhooks/{response.json()['id']}").status_code == 200
