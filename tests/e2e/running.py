"""The stack the CLI, Herald and example agent tests share (tests/e2e/conftest.py starts it)."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

ADMIN_KEY = "lbk_e2e-session-admin-key-0123456789"


@dataclass(frozen=True)
class Running:
    url: str
    admin_key: str
    agent_key: str  # agt_e2e: a service principal (an agent), editor on supply
    part_viewer_key: str  # usr_parts: viewer on supply, narrowed to the Kind Part
    log: Path

    def env(self, key: str | None = None) -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith("LOREBASE_")}
        env.update(LOREBASE_URL=self.url, LOREBASE_KEY=key or self.admin_key)
        return env


def principal(http: httpx.Client, principal: str, type: str, role: str, kinds: list[str] | None) -> str:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    response = http.post("/api/v1/principals", json={"id": principal, "type": type}, headers=admin)
    assert response.status_code == 201, response.text
    grant: dict[str, object] = {"principal": principal, "role": role}
    if kinds:
        grant["kinds"] = kinds
    response = http.post("/api/v1/domains/supply/grants", json=grant, headers=admin)
    assert response.status_code == 201, response.text
    response = http.post(f"/api/v1/principals/{principal}/keys", headers=admin)
    assert response.status_code == 201, response.text
    return str(response.json()["key"])


def stop(process: subprocess.Popen[bytes], data_dir: Path) -> None:
    children = []
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        pass
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(children, timeout=10)


__all__ = ["ADMIN_KEY", "Running", "principal", "stop"]
