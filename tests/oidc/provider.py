"""An OpenID Connect provider for the tests, run as a process of its own (`python -m
tests.oidc.provider --port P`): discovery (`/.well-known/openid-configuration`), its signing keys
(`/jwks`, RSA, key ids that change on `POST /rotate`) and a token endpoint that issues signed JWT
access tokens (PyJWT) by the client credentials grant, with the claims a test asks for (`sub`,
`groups`, `aud`, `ttl` in seconds, negative for one already expired). It prints `ready <url>` when
it listens."""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
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


def app(issuer: str) -> Starlette:
    keys = Keys()

    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": issuer,
                "jwks_uri": issuer + "/jwks",
                "token_endpoint": issuer + "/token",
                "grant_types_supported": ["client_credentials"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
            }
        )

    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse(keys.jwks())

    async def token(request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("grant_type") != "client_credentials":
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
            Route("/jwks", jwks),
            Route("/token", token, methods=["POST"]),
            Route("/rotate", rotate, methods=["POST"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    issuer = f"http://127.0.0.1:{args.port}"
    config = uvicorn.Config(app(issuer), host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    print(f"ready {issuer}", flush=True)
    server.run()


if __name__ == "__main__":
    main()
