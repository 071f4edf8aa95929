"""The OpenAPI document: valid OpenAPI 3.1, one operation per declared endpoint and no other, every
problem answer described as problem details, and served as is at /openapi.json without a key."""

from __future__ import annotations

import json

import httpx
from lorebase_gateway.app import create_app
from lorebase_gateway.gateway import Gateway
from openapi_spec_validator import validate

from lorebase.config import load_settings
from lorebase.contract import BY_NAME, ENDPOINTS
from lorebase.contract.openapi import document, served_document
from lorebase.contract.policy import Who


def test_the_document_is_valid_openapi_3_1() -> None:
    doc = document()
    assert doc["openapi"].startswith("3.1")
    validate(doc)


def test_every_declared_endpoint_is_one_operation_and_nothing_else_is() -> None:
    operations = {
        (method.upper(), path, operation["operationId"])
        for path, methods in document()["paths"].items()
        for method, operation in methods.items()
    }
    assert operations == {(e.method, e.openapi_path, e.name) for e in ENDPOINTS}


def test_every_operation_describes_its_problems_and_security() -> None:
    for methods in document()["paths"].values():
        for operation in methods.values():
            for status, answer in operation["responses"].items():
                if int(status) >= 400 and operation["operationId"] != "health":
                    assert "application/problem+json" in answer["content"], (operation["operationId"], status)
            assert 500 not in {int(s) for s in operation["responses"]}
            if BY_NAME[operation["operationId"]].policy.who is Who.ANYONE:
                assert operation["security"] == []
            else:
                assert operation["security"] == [{"bearer": []}, {"session": []}]


async def test_the_gateway_serves_the_document_and_a_page_without_a_key() -> None:
    app = create_app(Gateway(max_body_bytes=1024))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        served = await client.get("/openapi.json")
        page = await client.get("/docs")
    assert served.status_code == 200 and served.json() == document()
    assert page.status_code == 200 and "/openapi.json" in page.text
    assert "http://" not in page.text.replace("http://www.w3.org", "") and "https://" not in page.text


def test_configured_identity_providers_are_openidconnect_schemes() -> None:
    """One openIdConnect scheme per issuer keeper trusts, accepted wherever a credential is needed;
    the document still validates, and without issuers it is the plain one."""
    issuers = ("https://login.example.com/t1/v2.0", "https://idp.example.org/")
    served = served_document(issuers)
    validate(served)
    schemes = served["components"]["securitySchemes"]
    assert schemes["oidc_1"] == {
        "type": "openIdConnect",
        "openIdConnectUrl": "https://login.example.com/t1/v2.0/.well-known/openid-configuration",
        "description": schemes["oidc_1"]["description"],
    }
    assert schemes["oidc_2"]["openIdConnectUrl"] == "https://idp.example.org/.well-known/openid-configuration"
    for methods in served["paths"].values():
        for operation in methods.values():
            if BY_NAME[operation["operationId"]].policy.who is Who.ANYONE:
                assert operation["security"] == []
            else:
                assert operation["security"] == [
                    {"bearer": []},
                    {"session": []},
                    {"oidc_1": []},
                    {"oidc_2": []},
                ]
    assert list(served_document(issuers[:1])["components"]["securitySchemes"]) == [
        "bearer",
        "session",
        "oidc",
    ]
    assert served_document(()) == document()


async def test_the_gateway_serves_the_schemes_of_its_issuers() -> None:
    issuers = [{"issuer": "https://login.example.com", "audience": "lorebase"}]
    settings = load_settings({"LOREBASE_KEEPER__AUTH__OIDC__ISSUERS": json.dumps(issuers)})
    app = create_app(Gateway(max_body_bytes=1024, oidc=settings.model.keeper.auth.oidc))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        served = (await client.get("/openapi.json")).json()
    assert served == served_document(("https://login.example.com",))
    assert served["components"]["securitySchemes"]["oidc"]["type"] == "openIdConnect"
