"""Sign-in through an organisation's identity provider: access tokens (JWT) of a configured issuer
authenticate people beside API keys (keeper.auth.oidc), against a real provider process
(tests/oidc/provider.py: discovery, JWKS, a token endpoint) and a second one Lorebase does not
trust. The token's subject becomes a principal (created on first sight), its groups bring grants
per Domain and every policy applies to it unchanged; an untrusted issuer, an expired token and a
wrong audience are refused (401, WWW-Authenticate: Bearer); the provider's rotated keys are fetched
again. Herald's RFC 9728 metadata names the provider as its authorization server, and an MCP host
with OAuth (the TypeScript MCP SDK's client, clients/typescript/src/mcp_oauth.ts) signs in through
it end to end and calls a tool as the person the provider names."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lorebase import oidc
from lorebase.embedded import free_port
from tests.integration.conftest import open_stack
from tests.integration.gateway_server import serving
from tests.oidc.provider import start_provider, stop_provider
from tests.typescript_client import TYPESCRIPT, ensure_installed

D = "/api/v1/domains/supply"


@pytest.fixture(scope="module")
def providers() -> Iterator[tuple[str, str]]:
    trusted, stranger = start_provider("--user", "Erin", "--groups", "supply-readers"), start_provider()
    try:
        yield trusted[1], stranger[1]
    finally:
        for process, _ in (trusted, stranger):
            stop_provider(process)


async def _token(issuer: str, **claims: str) -> str:
    async with httpx.AsyncClient(trust_env=False) as http:
        answer = await http.post(
            issuer + "/token", data={"grant_type": "client_credentials", "client_id": "alice", **claims}
        )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_tokens_of_the_trusted_issuer_sign_people_in(
    database_url: str, providers: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    trusted, stranger = providers
    issuers = [
        {
            "issuer": trusted,
            "audience": "lorebase",
            "roles": {
                "supply-readers": [{"domain": "supply", "role": "viewer"}],
                "supply-editors": [{"domain": "supply", "role": "editor"}],
            },
        }
    ]
    monkeypatch.setattr(oidc, "MIN_REFETCH_S", 0.0)
    async with open_stack(database_url, LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps(issuers)) as stack:
        await stack.supply()
        # No issuer has a web client: the web app offers the API key alone.
        offered = await stack.http.get("/api/v1/web/identity-providers")
        assert offered.status_code == 200 and offered.json() == {"providers": []}
        reader = await _token(trusted, sub="Alice@Example.com", groups="supply-readers", name="Alice")
        schema = await stack.http.get(D + "/schema", headers=_bearer(reader))
        assert schema.status_code == 200, schema.text
        # A group without a mapping brings nothing: the Domain answers as absent.
        nobody = await stack.http.get(D + "/schema", headers=_bearer(await _token(trusted, sub="bob")))
        assert nobody.status_code == 404, nobody.text
        # A viewer may not write; an editor (a user) commits on main, as the principal the token names.
        body = {"parameters": {"key": "S-1001", "risk_score": 61}, "message": "Signed in through OIDC"}
        execute = D + "/operations/update_supplier/execute"
        assert (await stack.http.post(execute, json=body, headers=_bearer(reader))).status_code == 403
        editor = await _token(trusted, sub="carol", groups="supply-editors")
        written = await stack.http.post(execute, json=body, headers=_bearer(editor))
        assert written.status_code == 200, written.text
        history = await stack.http.get(D + "/kinds/Supplier/records/S-1001/history", headers=stack.admin)
        assert history.json()["changes"][0]["author"] == "usr_carol"
        # Refused, saying how to authenticate: another issuer, an expired token, another audience.
        for token in (
            await _token(stranger, sub="alice", groups="supply-readers"),
            await _token(trusted, sub="alice", groups="supply-readers", ttl="-120"),
            await _token(trusted, sub="alice", groups="supply-readers", aud="another-api"),
            reader[:-4] + "AAAA",  # a signature that does not verify
        ):
            refused = await stack.http.get(D + "/schema", headers=_bearer(token))
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"].startswith("Bearer")
        # The provider rotates its keys: a token signed with the new one is taken after a refetch.
        async with httpx.AsyncClient(trust_env=False) as http:
            await http.post(trusted + "/rotate")
        rotated = await _token(trusted, sub="dave", groups="supply-readers")
        assert (await stack.http.get(D + "/schema", headers=_bearer(rotated))).status_code == 200
        # API keys go on working beside tokens.
        assert (await stack.http.get(D + "/schema", headers=stack.admin)).status_code == 200


async def test_a_token_of_one_tenant_never_gets_another_s_grants(
    database_url: str, providers: tuple[str, str]
) -> None:
    """A multi-tenant issuer (tenant_claim `tid`): the same person's claim in two tenants names two
    principals, each with its own tenant's grants, however the caches are warmed; a tenant not
    listed, or a token naming none, is refused."""
    trusted, _ = providers
    issuers = [
        {
            "issuer": trusted,
            "audience": "lorebase",
            "tenant_claim": "tid",
            "tenants": {
                "t-acme": {"name": "acme", "grants": [{"domain": "supply", "role": "editor"}]},
                "t-globex": {
                    "name": "globex",
                    "roles": {"auditors": [{"domain": "supply", "role": "viewer", "kinds": ["Part"]}]},
                },
            },
        }
    ]
    async with open_stack(database_url, LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps(issuers)) as stack:
        await stack.supply()
        acme = _bearer(await _token(trusted, sub="alice", claims='{"tid": "t-acme"}'))
        globex = _bearer(await _token(trusted, sub="alice", groups="auditors", claims='{"tid": "t-globex"}'))
        supplier = D + "/kinds/Supplier/records/S-1001"
        for _ in range(2):  # in either order, with the caches warm from the other tenant's token
            assert (await stack.http.get(supplier, headers=acme)).status_code == 200
            hidden = await stack.http.get(supplier, headers=globex)
            assert hidden.status_code == 404, hidden.text  # its grant reads Parts only
            assert (
                await stack.http.get(D + "/kinds/Part/records/P-10028", headers=globex)
            ).status_code == 200
        whoami = [
            (await stack.http.get("/api/v1/web/session", headers=h)).json()["principal"]
            for h in (acme, globex)
        ]
        assert whoami == ["usr_acme_alice", "usr_globex_alice"]
        body = {"parameters": {"key": "S-1001", "risk_score": 62}, "message": "From acme"}
        execute = D + "/operations/update_supplier/execute"
        assert (await stack.http.post(execute, json=body, headers=globex)).status_code in (403, 404)
        assert (await stack.http.post(execute, json=body, headers=acme)).status_code == 200
        for claims in ('{"tid": "t-initech"}', "{}"):
            stranger = _bearer(await _token(trusted, sub="alice", groups="auditors", claims=claims))
            refused = await stack.http.get(supplier, headers=stranger)
            assert refused.status_code == 401 and "tenant" in refused.json()["detail"], refused.text


async def test_herald_names_the_authorization_server(providers: tuple[str, str]) -> None:
    from lorebase.clients.rest import RestSettings
    from lorebase.herald.server import http_app

    trusted, _ = providers
    app = http_app(RestSettings(url="http://127.0.0.1:9"), domain="supply", authorization_servers=[trusted])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://herald.test"
    ) as http:
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp")
        assert metadata.json()["authorization_servers"] == [trusted]
        refused = await http.post("/mcp", json={})
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]


async def _run(*command: str, cwd: Path = TYPESCRIPT) -> str:
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), 400)
    assert process.returncode == 0, f"{' '.join(command)}\n{output.decode(errors='replace')[-4000:]}"
    return output.decode()


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_an_mcp_host_with_oauth_signs_in_through_the_provider(
    database_url: str, providers: tuple[str, str]
) -> None:
    trusted, _ = providers
    issuers = [
        {
            "issuer": trusted,
            "audience": "lorebase",
            "roles": {"supply-readers": [{"domain": "supply", "role": "viewer"}]},
        }
    ]
    await asyncio.to_thread(ensure_installed)
    await _run(str(TYPESCRIPT / "node_modules" / ".bin" / "tsc"), "-p", "tsconfig.mcp.json")
    async with (
        open_stack(database_url, LOREBASE_KEEPER__AUTH__OIDC__ISSUERS=json.dumps(issuers)) as stack,
        serving(stack.gateway) as gateway,
    ):
        await stack.supply()
        port = free_port()
        herald = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "lorebase", "herald", "--transport", "http", "--port", str(port),
            "--url", gateway.url, "--authorization-server", trusted,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            async with httpx.AsyncClient(trust_env=False) as http:
                for _ in range(300):
                    try:
                        await http.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource")
                        break
                    except httpx.HTTPError:
                        await asyncio.sleep(0.1)
            answer = json.loads(
                (await _run("node", "dist/mcp_oauth.js", f"http://127.0.0.1:{port}/mcp")).splitlines()[-1]
            )
        finally:
            herald.terminate()
            await herald.wait()
    assert answer["token"] and not answer["error"], answer
    assert "Kavsen Alloys" in answer["text"]
