"""One stack for the CLI, Herald and example agent tests: `lorebase up --example supply` as the README
starts it, once per session, with an agent principal (a service) and a viewer narrowed to Part."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from lorebase.embedded import free_port
from tests.e2e.running import ADMIN_KEY, HEALTH_TIMEOUT_S, Running, Stack, principal, stop, up_env

E2E_ISSUER = "https://login.example.com/lorebase-e2e"


@pytest.fixture(scope="session")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    directory = tmp_path_factory.mktemp("stack")
    data_dir, log = directory / "data", directory / "up.log"
    port = free_port()
    # An identity provider as an organisation configures one (never asked here: the tests send API
    # keys), so that /openapi.json names its openIdConnect scheme, as generators meet it.
    env = up_env(
        data_dir,
        port,
        ADMIN_KEY,
        LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps([{"issuer": E2E_ISSUER, "audience": "lorebase"}]),
    )
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lorebase", "up", "--example", "supply"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while "Lorebase is up" not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"lorebase up did not come up:\n{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=30, trust_env=False) as http:
            agent = principal(http, "agt_e2e", "service", "editor", None)
            viewer = principal(http, "usr_parts", "user", "viewer", ["Part"])
        yield Running(url, ADMIN_KEY, agent, viewer, log, data_dir)
    finally:
        stop(process, data_dir)


@pytest.fixture
def stacks() -> Iterator[list[Stack]]:
    """`lorebase up` processes a test starts itself (Stack); whatever their state, none outlives it."""
    started: list[Stack] = []
    try:
        yield started
    finally:
        for stack in started:
            stack.kill_all()
