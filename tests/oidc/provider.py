"""An OpenID Connect provider for the tests, run as a process of its own (`python -m
tests.oidc.provider --port P`): discovery (`/.well-known/openid-configuration`, and the OAuth
authorization server metadata of RFC 8414), its signing keys (`/jwks`, RSA, key ids that change on
`POST /rotate`), dynamic client registration (`/register`), the authorization code flow with PKCE
(S256) for a person who has already signed in and consents at once (`--user`, `--groups`: what an
MCP host's browser would do), and a token endpoint that issues signed JWT access tokens (PyJWT) by
that code or by the client credentials grant, with the claims a test asks for (`sub`, `groups`,
`aud`, `ttl` in seconds, negative for one already expired). Every token's audience is `lorebase`
unless asked otherwise. It prints `ready <url>` when it listens."""

from __future__ import annotations

import argparse
import base64
import hashlib
import secrets
import time
import uuid
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route


class Keys:
    def __init__(self) -> None:
        self.rotate()

    def rotate(self) -> None:
        self.kid = uuid.uuid4().hex[:12]
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict[str, Any]:
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}


def app(issuer: str, user: str = "alice", groups: str = "") -> Starlette:
    keys = Keys()
    clients: dict[str, list[str]] = {}  # client_id -> its redirect URIs
    codes: dict[str, dict[str, str]] = {}  # an authorization code -> what it was issued for

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
                "token_endpoint_auth_methods_supported": ["none"],
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
        return JSONResponse(
            {**metadata, "client_id": client_id, "token_endpoint_auth_method": "none"}, status_code=201
        )

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
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            form = {"sub": user, "groups": groups}  # type: ignore[assignment]
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
        }
        signed = jwt.encode(claims, keys.private, algorithm="RS256", headers={"kid": keys.kid})
        return JSONResponse({"access_token": signed, "token_type": "Bearer", "expires_in": ttl})

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
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="alice", help="who signs in by the authorization code flow")
    parser.add_argument("--groups", default="", help="that person's groups, space-separated")
    args = parser.parse_args()
    issuer = f"http://127.0.0.1:{args.port}"
    served = app(issuer, args.user, args.groups)
    config = uvicorn.Config(served, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    print(f"ready {issuer}", flush=True)
    server.run()


if __name__ == "__main__":
    main()
