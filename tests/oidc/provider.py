"""An OpenID Connect provider for the tests, run as a process of its own (`python -m
tests.oidc.provider --port P`): discovery (`/.well-known/openid-configuration`, and the OAuth
authorization server metadata of RFC 8414), its signing keys (`/jwks`, RSA, key ids that change on
`POST /rotate`), dynamic client registration (`/register`), the authorization code flow with PKCE
(S256) for a person who has already signed in and consents at once (`--user`, `--groups`: what an
MCP host's browser would do), and a token endpoint that issues signed JWT access tokens (PyJWT) by
that code or by the client credentials grant, with the claims a test asks for (`sub`, `groups`,
`aud`, `ttl` in seconds, negative for one already expired; any other as JSON in `claims`). Every token's audience is `lorebase`
unless asked otherwise. The code grant also answers an ID token (`aud` the client, the `nonce` the
authorization request sent), as a web app's sign-in needs; a client registered with
`token_endpoint_auth_method: client_secret_post` gets a secret the token endpoint then requires.
`POST /next` (a JSON object: `iss`, `aud`, `ttl`, `sub`, `groups` and any other claim) changes the
tokens of the next code grant only: how a test makes the provider misbehave. `--claims` adds claims
(JSON) to every token of the code grant (a tenant's `tid`...). It prints `ready <url>` when it
listens."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx
import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route

from lorebase.embedded import free_port


class Keys:
    def __init__(self) -> None:
        self.rotate()

    def rotate(self) -> None:
        self.kid = uuid.uuid4().hex[:12]
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict[str, Any]:
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}


def app(issuer: str, user: str = "alice", groups: str = "", extra: dict[str, Any] | None = None) -> Starlette:
    keys = Keys()
    clients: dict[str, list[str]] = {}  # client_id -> its redirect URIs
    secrets_of: dict[str, str] = {}  # client_id -> its secret (confidential clients)
    codes: dict[str, dict[str, str]] = {}  # an authorization code -> what it was issued for
    upcoming: dict[str, Any] = {}  # claims the next code grant's tokens take instead (POST /next)

    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": issuer,
                "jwks_uri": issuer + "/jwks",
                "authorization_endpoint": issuer + "/authorize",
                "token_endpoint": issuer + "/token",
                "registration_endpoint": issuer + "/register",
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "scopes_supported": ["openid"],
            }
        )

    async def register(request: Request) -> JSONResponse:
        metadata = await request.json()
        client_id = "client_" + secrets.token_hex(8)
        clients[client_id] = list(metadata.get("redirect_uris") or [])
        answer = {**metadata, "client_id": client_id, "token_endpoint_auth_method": "none"}
        if metadata.get("token_endpoint_auth_method") == "client_secret_post":
            secrets_of[client_id] = secrets.token_urlsafe(24)
            answer.update(
                token_endpoint_auth_method="client_secret_post", client_secret=secrets_of[client_id]
            )
        return JSONResponse(answer, status_code=201)

    async def authorize(request: Request) -> Any:
        asked = request.query_params
        redirect_uri = asked.get("redirect_uri", "")
        if asked.get("client_id") not in clients or redirect_uri not in clients[asked["client_id"]]:
            return JSONResponse({"error": "invalid_client"}, status_code=400)
        if asked.get("response_type") != "code" or asked.get("code_challenge_method") != "S256":
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(16)
        codes[code] = {
            "client_id": asked["client_id"],
            "redirect_uri": redirect_uri,
            "challenge": asked.get("code_challenge", ""),
            "nonce": asked.get("nonce", ""),
        }
        state = asked.get("state")
        return RedirectResponse(f"{redirect_uri}?code={code}" + (f"&state={state}" if state else ""), 302)

    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse(keys.jwks())

    async def token(request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("grant_type") == "authorization_code":
            issued = codes.pop(str(form.get("code")), None)
            verifier = str(form.get("code_verifier") or "").encode()
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
            if (
                issued is None
                or issued["challenge"] != challenge
                or issued["client_id"] != form.get("client_id")
                or issued["redirect_uri"] != form.get("redirect_uri")
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            secret = secrets_of.get(issued["client_id"])
            if secret is not None and form.get("client_secret") != secret:
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            return _code_tokens(issued)
        elif form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        now = int(time.time())
        ttl = int(str(form.get("ttl") or 300))
        claims = {
            "iss": issuer,
            "sub": str(form.get("sub") or form.get("client_id")),
            "aud": str(form.get("aud") or "lorebase"),
            "iat": now,
            "exp": now + ttl,
            "name": str(form.get("name") or ""),
            "groups": str(form.get("groups") or "").split(),
            **json.loads(str(form.get("claims") or "{}")),
        }
        signed = jwt.encode(claims, keys.private, algorithm="RS256", headers={"kid": keys.kid})
        return JSONResponse({"access_token": signed, "token_type": "Bearer", "expires_in": ttl})

    def _code_tokens(issued: dict[str, str]) -> JSONResponse:
        """The tokens of the code grant: an access token for Lorebase and an ID token for the client."""
        asked = {"sub": user, "groups": groups.split(), **(extra or {}), **upcoming}
        upcoming.clear()
        now = int(time.time())
        ttl = int(asked.pop("ttl", 300))
        common = {"iss": issuer, "iat": now, "exp": now + ttl, **asked}
        common.setdefault("iss", issuer)
        access = {"aud": "lorebase", "name": str(asked.get("name") or ""), **common}
        identity = {**common, "aud": issued["client_id"], "nonce": issued["nonce"]}
        headers = {"kid": keys.kid}
        return JSONResponse(
            {
                "access_token": jwt.encode(access, keys.private, algorithm="RS256", headers=headers),
                "id_token": jwt.encode(identity, keys.private, algorithm="RS256", headers=headers),
                "token_type": "Bearer",
                "expires_in": ttl,
            }
        )

    async def next_tokens(request: Request) -> JSONResponse:
        upcoming.update(await request.json())
        return JSONResponse(upcoming)

    async def rotate(request: Request) -> JSONResponse:
        keys.rotate()
        return JSONResponse({"kid": keys.kid})

    return Starlette(
        routes=[
            Route("/.well-known/openid-configuration", discovery),
            Route("/.well-known/oauth-authorization-server", discovery),
            Route("/register", register, methods=["POST"]),
            Route("/authorize", authorize),
            Route("/jwks", jwks),
            Route("/token", token, methods=["POST"]),
            Route("/rotate", rotate, methods=["POST"]),
            Route("/next", next_tokens, methods=["POST"]),
        ]
    )


def start_provider(*options: str) -> tuple[subprocess.Popen[str], str]:
    """Start the provider as a process of its own (`options`: --user, --groups, --claims); the
    process and its issuer URL, once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.oidc.provider", "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("ready "), line
    url = line.split()[1]
    for _ in range(300):
        try:
            httpx.get(url + "/jwks", timeout=1, trust_env=False)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    return process, url


def stop_provider(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(10)
    if process.stdout is not None:
        process.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="alice", help="who signs in by the authorization code flow")
    parser.add_argument("--groups", default="", help="that person's groups, space-separated")
    parser.add_argument("--claims", default="{}", help="more claims of the code grant's tokens (JSON)")
    args = parser.parse_args()
    issuer = f"http://127.0.0.1:{args.port}"
    served = app(issuer, args.user, args.groups, json.loads(args.claims))
    config = uvicorn.Config(served, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    print(f"ready {issuer}", flush=True)
    server.run()


if __name__ == "__main__":
    main()
