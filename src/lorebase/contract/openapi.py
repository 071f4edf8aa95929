"""The OpenAPI 3.1 document of the REST surface, made from the endpoint declarations, and the small
page at `/docs` that renders it in the browser without fetching anything from elsewhere.

Every declared endpoint is a path operation: its parameters with their JSON Schemas (msgspec's, so
the bounds the edge enforces are the ones published), its request body (with the seed's example),
its success answer with its response model (lorebase.contract.answers), example and headers, the
other answers it declares, and every problem it may answer, as `application/problem+json`
(RFC 9457). The problems common to all endpoints are added by kind: every call with a credential
may answer 401, 403, 404, 429 and 503, every call with parameters 400, every call with a body 413,
415 and its `invalid_status`. The webhook deliveries are OpenAPI 3.1 `webhooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import msgspec

from lorebase import __version__
from lorebase.contract import ENDPOINTS, Endpoint, examples
from lorebase.contract.answers.feed import OperationEvent, RevisionEvent
from lorebase.contract.documents import Problem
from lorebase.contract.policy import Who
from lorebase.contract.schemas import RULES, for_generators

# RFC 9457 problem details, with the issues of a bad input (lorebase.contract.documents).
(_,), _PROBLEM_SCHEMAS = msgspec.json.schema_components([Problem], ref_template="#/components/schemas/{name}")
PROBLEM = _PROBLEM_SCHEMAS["Problem"]
_REASONS = {
    202: "Accepted: an agent task write ran on its task branch; its Proposal waits for review or has Conflicts",
    304: "Not modified: the ETag sent in If-None-Match is still current",
    400: "A parameter or the body is malformed",
    401: "No credential, or one that is unknown or revoked",
    403: "The caller lacks the permission",
    404: "No such Domain, branch, Kind, Record or other named thing (or one the caller may not see)",
    405: "Method not allowed",
    408: "The request did not arrive in time",
    409: "The state conflicts with the request (stale head, review required, already exists...)",
    413: "The body is too large",
    415: "The body is not JSON",
    422: "The body does not fit (the issues name each member)",
    429: "Rate limited: retry after Retry-After seconds",
    503: "A service did not answer, or the gateway is stopping: retry shortly",
}
_NO_KEY = {"health"}  # the gateway's own, answered without asking a service
# Either credential authenticates every other call: the key, or the web app's session cookie.
SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"session": []}]
# Endpoints outside keeper whose answer names a Revision in Lorebase-Revision.
_REVISION_HEADER = {"changes"}
_SSE_EVENT = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "The event sequence (send it back as Last-Event-ID)"},
        "event": {"type": "string", "enum": ["revision"]},
        "data": {
            "type": "string",
            "description": "The event document, JSON (docs/feed.md)",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/RevisionEvent"},
        },
    },
}
_WWW_AUTHENTICATE = {
    "description": 'How to authenticate (RFC 6750): Bearer realm="lorebase"',
    "required": True,
    "schema": {"type": "string", "pattern": "^Bearer "},
}
_REVISION = {
    "description": "The Revision the answer describes or created (absent when there is none)",
    "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
}


# A read the gateway may answer from its cache (Endpoint.read_cache): how a client opts in, and what
# the answer then says (docs/rest.md, "Bounded staleness").
_READ_CACHE_PARAMETERS = [
    {
        "name": "Cache-Control",
        "in": "header",
        "required": False,
        "description": "Its max-stale=<seconds> directive (others are ignored): an answer up to that old (cut to http.read_cache.max_stale_s) may "
        "come from the gateway's cache without asking keeper; without it the answer is as fresh as the head",
        "schema": {"type": "string", "maxLength": 1024},
    },
    {
        "name": "Lorebase-Min-Revision",
        "in": "header",
        "required": False,
        "description": "A Revision the client has seen (e.g. its write's Lorebase-Revision): a cached answer "
        "is served only when it describes that Revision; otherwise keeper answers at the head",
        "schema": _REVISION["schema"],
    },
]
_READ_CACHE_HEADERS = {
    "Lorebase-Cache": {
        "description": "On a request with max-stale: hit (answered from the gateway's cache) or miss",
        "schema": {"type": "string", "enum": ["hit", "miss"]},
    },
    "Age": {
        "description": "On a hit: seconds since keeper was asked for the answer",
        "schema": {"type": "integer", "minimum": 0},
    },
}


def _schema(model: Any, schemas: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a model, its Structs added to `schemas` by name (two different Structs of
    one name would make one of them wrong in the document: refused)."""
    (schema,), found = msgspec.json.schema_components([model], ref_template="#/components/schemas/{name}")
    for name, component in found.items():
        if schemas.setdefault(name, component) != component:
            raise TypeError(f"two different schemas are named {name!r}: rename one of the Structs")
    return schema


def _problems(endpoint: Endpoint) -> list[int]:
    statuses = set(endpoint.problems)
    if endpoint.name not in _NO_KEY:
        statuses |= {400, 401, 403, 404, 429, 503}
    if endpoint.body is not None:  # 422 also for a body that fits but breaks a rule of the schema
        statuses |= {400, 413, 415, 422, endpoint.invalid_status}
    if endpoint.etag:
        statuses.add(304)
    return sorted(statuses)


def _json(model: Any, example: Any, schemas: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"schema": {"type": "object"} if model is None else _schema(model, schemas)}
    if example is not None:
        entry["example"] = example
    return entry


def _success(endpoint: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = {}
    for media in endpoint.media_types:
        if media == "application/json":  # the Markdown form of a read describes the same document
            content[media] = _json(endpoint.response, endpoint.example, schemas)
        elif media == "text/event-stream":  # each event: its id (the sequence), name and JSON document
            _schema(RevisionEvent, schemas)
            content[media] = {"schema": _SSE_EVENT}
        else:
            content[media] = {"schema": {"type": "string"}}
    headers: dict[str, Any] = {}
    if endpoint.service == "keeper" or endpoint.etag or endpoint.name in _REVISION_HEADER:
        headers["Lorebase-Revision"] = _REVISION
    if endpoint.etag:
        headers["ETag"] = {
            "description": "Send it back in If-None-Match: 304 while the answer is unchanged",
            "schema": {"type": "string"},
        }
    if any(parameter.alias == "Idempotency-Key" for parameter in endpoint.parameters):
        headers["Idempotent-Replayed"] = {
            "description": "The original answer of a request retried under its idempotency key",
            "schema": {"type": "string", "enum": ["true"]},
        }
    if endpoint.no_store:
        headers["Cache-Control"] = {"schema": {"type": "string", "enum": ["no-store"]}}
    if any(parameter.alias == "Prefer" for parameter in endpoint.parameters):
        headers["Preference-Applied"] = {
            "description": "`wait=N`: sent with `Prefer: respond-async, wait=N`, the job ended within "
            "N seconds and this is its answer",
            "schema": {"type": "string", "pattern": "^wait=[0-9]+$"},
        }
    if endpoint.read_cache:
        headers.update(_READ_CACHE_HEADERS)
    if 300 <= endpoint.success < 400:  # a redirect: where the browser goes next
        headers["Location"] = {"description": "Where the browser goes next", "schema": {"type": "string"}}
    answer: dict[str, Any] = {"description": endpoint.summary}
    if endpoint.success != 204 and content:  # 204 No Content; a redirect's body is nobody's
        answer["content"] = content
    if headers:
        answer["headers"] = headers
    return answer


def _operation(endpoint: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": endpoint.name,
        "summary": endpoint.summary,
        "tags": [endpoint.tag],
    }
    # Who may call it, as its policy says (lorebase.contract.policy); the policy itself, as data.
    description = f"{endpoint.policy.describe()} {endpoint.description}".strip()
    operation["x-lorebase-policy"] = endpoint.policy.document()
    if description:
        operation["description"] = description
    parameters = []
    for parameter in endpoint.parameters:
        entry: dict[str, Any] = {
            "name": parameter.alias,
            "in": parameter.where,
            "required": parameter.where == "path" or parameter.required,
            "schema": msgspec.json.schema(parameter.type),
        }
        if parameter.where == "path" and endpoint.path.find(f"{{{parameter.alias}:path}}") >= 0:
            entry["description"] = "May hold '/' (a branch name like agent/agt_risk/q4)"
        parameters.append(entry)
    if endpoint.read_cache:
        parameters += _READ_CACHE_PARAMETERS
    if parameters:
        operation["parameters"] = parameters
    if endpoint.body is not None:
        operation["requestBody"] = {
            "required": not endpoint.body_optional,
            "content": {"application/json": _json(endpoint.body, endpoint.request_example, schemas)},
        }
    responses: dict[str, Any] = {str(endpoint.success): _success(endpoint, schemas)}
    for status, model in endpoint.other_answers:
        other: dict[str, Any] = {
            "description": _REASONS.get(status, endpoint.summary),
            "content": {"application/json": _json(model, None, schemas)},
        }
        if status < 300 and "headers" in responses[str(endpoint.success)]:
            other["headers"] = dict(responses[str(endpoint.success)]["headers"])
        if status == 202 and any(parameter.alias == "Prefer" for parameter in endpoint.parameters):
            other["headers"] = {
                k: v for k, v in other.get("headers", {}).items() if k != "Preference-Applied"
            } | _ASYNC_HEADERS
        responses[str(status)] = other
    for status in _problems(endpoint):
        if str(status) in responses:
            continue
        if status == 304:
            responses["304"] = {"description": _REASONS[304]}
            continue
        responses[str(status)] = {
            "description": _REASONS.get(status, "A problem"),
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        if status == 401:
            responses["401"]["headers"] = {"WWW-Authenticate": _WWW_AUTHENTICATE}
    operation["responses"] = responses
    operation["security"] = [] if endpoint.policy.who is Who.ANYONE else SECURITY
    return operation


# The 202 of a request sent with `Prefer: respond-async` (RFC 7240): the job to follow.
_ASYNC_HEADERS = {
    "Location": {
        "description": "The job: GET it until it is no longer running",
        "schema": {"type": "string"},
    },
    "Preference-Applied": {
        "description": "`respond-async`, or `respond-async, wait=N` when the call waited N seconds first",
        "schema": {"type": "string", "pattern": "^respond-async(, wait=[0-9]+)?$"},
    },
}

_DELIVERY_HEADERS = [
    ("Lorebase-Event", "The event's type (revision.committed, operation.<side effect>)"),
    ("Lorebase-Delivery", "The delivery id"),
    ("Idempotency-Key", "evt_<sequence>, the same on every attempt of an event: drop repeats by it"),
    (
        "Lorebase-Signature",
        "t=<unix seconds>,v1=<hex>: HMAC-SHA256 over `<t>.` + body, keyed with the SHA-256 of the secret",
    ),
]


def _webhooks(schemas: dict[str, Any]) -> dict[str, Any]:
    """The deliveries a webhook receives (OpenAPI 3.1 `webhooks`): a signed POST of the event
    document, at least once, unordered (order by `sequence`), retried with backoff until a 2xx."""

    def delivery(summary: str, model: Any, example: Any) -> dict[str, Any]:
        return {
            "post": {
                "summary": summary,
                "description": "Each delivery is signed (Lorebase-Signature) and made at least once: "
                "answer 2xx quickly (the body is never read); other answers and timeouts are retried "
                "with backoff up to webhooks.max_attempts (docs/feed.md).",
                "parameters": [
                    {
                        "name": name,
                        "in": "header",
                        "required": True,
                        "description": text,
                        "schema": {"type": "string"},
                    }
                    for name, text in _DELIVERY_HEADERS
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": _json(model, example, schemas)},
                },
                "responses": {"2XX": {"description": "Acknowledged"}},
            }
        }

    return {
        "revision.committed": delivery(
            "A Revision committed on a branch the webhook follows", RevisionEvent, examples.REVISION_EVENT
        ),
        "operation.{side_effect}": delivery(
            "A committed execution of an Operation declaring the side effect",
            OperationEvent,
            examples.OPERATION_EVENT,
        ),
    }


@cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every declared endpoint."""
    schemas: dict[str, Any] = dict(_PROBLEM_SCHEMAS)
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in ENDPOINTS:
        paths.setdefault(endpoint.openapi_path, {})[endpoint.method.lower()] = _operation(endpoint, schemas)
    for name, rule in RULES.items():  # the rules annotations cannot say (lorebase.contract.schemas)
        if name in schemas:
            component = schemas[name]
            required = sorted({*component.get("required", ()), *rule.get("required", ())})
            schemas[name] = {**component, **rule, **({"required": required} if required else {})}
    return for_generators(
        {
            "openapi": "3.1.0",
            "info": {
                "title": "Lorebase",
                "version": __version__,
                "description": "Shared, versioned knowledge for AI agents: a typed graph with Revisions, "
                "Operations and a change feed. Every call but /health and the web app's sign-in needs "
                "`Authorization: Bearer <key>` (or the web app's session cookie, with X-CSRF-Token on writes). "
                "Values travel in canonical form (integers and decimals as strings).",
            },
            "servers": [{"url": "/"}],
            "paths": paths,
            "webhooks": _webhooks(schemas),
            "components": {
                "schemas": schemas,
                "securitySchemes": {
                    "bearer": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "An API key (an identity provider's access token travels the same "
                        "way: its openIdConnect scheme, when one is configured)",
                    },
                    "session": {
                        "type": "apiKey",
                        "in": "cookie",
                        "name": "lorebase_session",
                        "description": "The web app's session (POST /api/v1/web/session); writes also send "
                        "X-CSRF-Token",
                    },
                },
            },
        }
    )


def oidc_schemes(issuers: Sequence[str]) -> dict[str, Any]:
    """The `openIdConnect` security schemes of the identity providers whose access tokens Lorebase
    accepts (keeper.auth.oidc.issuers): one per issuer (`oidc`, or `oidc_1`, `oidc_2`... for more than
    one), each naming its discovery document."""
    named = ["oidc"] if len(issuers) == 1 else [f"oidc_{n}" for n in range(1, len(issuers) + 1)]
    return {
        name: {
            "type": "openIdConnect",
            "openIdConnectUrl": issuer.rstrip("/") + "/.well-known/openid-configuration",
            "description": f"An access token (JWT) of the identity provider {issuer}, as "
            "`Authorization: Bearer <token>` (docs/security.md)",
        }
        for name, issuer in zip(named, issuers, strict=True)
    }


def served_document(issuers: Sequence[str] = ()) -> dict[str, Any]:
    """The document as the gateway serves it: `document()`, and with identity providers configured
    their `openIdConnect` schemes, which every operation that needs a credential accepts too."""
    base = document()
    if not issuers:
        return base
    schemes = oidc_schemes(issuers)
    security = SECURITY + [{name: []} for name in schemes]
    paths = {
        path: {
            method: {**operation, "security": security} if operation["security"] else operation
            for method, operation in methods.items()
        }
        for path, methods in base["paths"].items()
    }
    components = {
        **base["components"],
        "securitySchemes": {**base["components"]["securitySchemes"], **schemes},
    }
    return {**base, "paths": paths, "components": components}


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lorebase API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2327;background:#fafafa}
header{background:#1d2327;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:16px 24px}h2{margin-top:28px;border-bottom:1px solid #ddd}
details{background:#fff;border:1px solid #e1e4e8;border-radius:6px;margin:6px 0;padding:6px 10px}
summary{cursor:pointer}code{font:13px ui-monospace,monospace}
.m{display:inline-block;width:64px;font-weight:600;font-family:ui-monospace,monospace}
.get{color:#0b6e4f}.post{color:#1f5fbf}.put,.patch{color:#8a5a00}.delete{color:#b42318}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #e1e4e8;padding:3px 8px;text-align:left;vertical-align:top}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:320px}
</style></head><body>
<header><h1>Lorebase API</h1><div id="info"></div></header>
<main><p>The contract as served at <a href="/openapi.json"><code>/openapi.json</code></a>
(OpenAPI 3.1). Every call but <code>/health</code> needs <code>Authorization: Bearer &lt;key&gt;</code>.</p>
<div id="api">Loading…</div></main>
<script>
const esc = s => String(s ?? "").replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
const ref = (doc, s) => s && s.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s;
fetch("/openapi.json").then(r => r.json()).then(doc => {
  document.getElementById("info").textContent = doc.info.title + " " + doc.info.version;
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops))
    (byTag[op.tags[0]] ??= []).push([method, path, op]);
  let html = "";
  for (const [tag, ops] of Object.entries(byTag)) {
    html += `<h2>${esc(tag)}</h2>`;
    for (const [method, path, op] of ops) {
      html += `<details id="${esc(op.operationId)}"><summary><span class="m ${method}">${method.toUpperCase()}</span>` +
        `<code>${esc(path)}</code> — ${esc(op.summary)}</summary>`;
      if (op.description) html += `<p>${esc(op.description)}</p>`;
      if (op.parameters) html += "<table><tr><th>parameter</th><th>in</th><th>schema</th></tr>" +
        op.parameters.map(p => `<tr><td><code>${esc(p.name)}</code>${p.required ? " *" : ""}</td>` +
          `<td>${esc(p.in)}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`).join("") + "</table>";
      if (op.requestBody) {
        const body = ref(doc, op.requestBody.content["application/json"].schema);
        html += `<p>Body:</p><pre>${esc(JSON.stringify(body, null, 2))}</pre>`;
      }
      html += "<p>Answers: " + Object.entries(op.responses).map(([s, r]) => `<b>${s}</b> ${esc(r.description)}`).join("; ") + "</p>";
      html += "</details>";
    }
  }
  document.getElementById("api").innerHTML = html;
});
</script></body></html>
"""


def docs_page() -> str:
    """The page at /docs: it reads /openapi.json from the same server and lists every operation."""
    return _PAGE


__all__ = ["PROBLEM", "docs_page", "document"]
