"""Example Domains shipped in examples/: loaded through the REST API, like any client would.

`load_example("supply", ...)` creates the Domain `supply` unless it exists: the principals
usr_loader and usr_editor, the import by usr_loader and then `update_supplier` by usr_editor
raising the risk of S-1001 to 90, so that branch main holds exactly two Revisions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson

from lorebase.schema import parse_yaml

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


class ExampleError(RuntimeError):
    pass


def example_dir(name: str) -> Path:
    path = EXAMPLES / name
    if not (path / "schema.yaml").is_file():
        known = (
            sorted(p.name for p in EXAMPLES.iterdir() if (p / "schema.yaml").is_file())
            if EXAMPLES.is_dir()
            else []
        )
        raise ExampleError(f"unknown example {name!r}; known: {', '.join(known) or 'none'}")
    return path


def _check(response: httpx.Response, *ok: int) -> dict[str, Any]:
    if response.status_code not in ok:
        raise ExampleError(
            f"{response.request.method} {response.request.url.path}: {response.status_code} {response.text}"
        )
    return dict(response.json()) if response.content else {}


def _principal_key(client: httpx.Client, admin: dict[str, str], principal: str) -> str:
    _check(
        client.post(
            "/api/v1/principals", json={"id": principal, "type": "user", "name": principal}, headers=admin
        ),
        201,
        409,
    )
    return str(_check(client.post(f"/api/v1/principals/{principal}/keys", headers=admin), 201)["key"])


def load_example(name: str, *, base_url: str, admin_key: str) -> bool:
    """Create the example Domain; False when it exists already."""
    if name != "supply":
        example_dir(name)
        raise ExampleError(f"no loader for example {name!r}")
    path = example_dir(name)
    admin = {"Authorization": f"Bearer {admin_key}"}
    with httpx.Client(base_url=base_url, timeout=120.0, trust_env=False) as client:
        if client.get(f"/api/v1/domains/{name}", headers=admin).status_code == 200:
            return False
        loader = {"Authorization": f"Bearer {_principal_key(client, admin, 'usr_loader')}"}
        editor = {"Authorization": f"Bearer {_principal_key(client, admin, 'usr_editor')}"}
        schema = parse_yaml((path / "schema.yaml").read_text(encoding="utf-8"))
        _check(client.post("/api/v1/domains", json={"name": name, "schema": schema}, headers=admin), 201)
        for principal, role in (("usr_loader", "admin"), ("usr_editor", "editor")):
            _check(
                client.post(
                    f"/api/v1/domains/{name}/grants",
                    json={"principal": principal, "role": role, "branches": ["*"]},
                    headers=admin,
                ),
                201,
            )
        data = orjson.loads((path / "data.json").read_bytes())
        _check(
            client.post(
                f"/api/v1/domains/{name}/imports",
                json={"source": f"examples/{name}", "message": "Import the supply example data", **data},
                headers={**loader, "Idempotency-Key": f"example-{name}-import"},
            ),
            200,
        )
        _check(
            client.post(
                f"/api/v1/domains/{name}/operations/update_supplier/execute",
                json={
                    "parameters": {"key": "S-1001", "risk_score": 90},
                    "message": "Raise the risk of S-1001",
                },
                headers={**editor, "Idempotency-Key": f"example-{name}-raise-risk"},
            ),
            200,
        )
    return True


__all__ = ["ExampleError", "example_dir", "load_example"]
