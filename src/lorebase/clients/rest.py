"""The REST client of the gateway (docs/rest.md): what the CLI and Herald call, one method per route.

Every method is registered in ROUTES with its HTTP method and path template, the same templates as
the gateway's routes (`{branch}` may hold `/`), so the parity test can hold the two lists side by
side. Answers that are not a success raise `Problem` with the problem document's members; a gateway
that does not answer raises `Problem(503, "unreachable", ...)`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import orjson

from lorebase.problems import Problem

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_DOMAIN = "supply"
API = "/api/v1"
DOMAIN = API + "/domains/{domain}"
RECORD = DOMAIN + "/kinds/{kind}/records/{key}"
PROPOSAL = DOMAIN + "/proposals/{proposal}"


@dataclass(frozen=True)
class RestRoute:
    method: str
    path: str


ROUTES: dict[str, RestRoute] = {}
F = TypeVar("F", bound=Callable[..., Any])


def _route(method: str, path: str) -> Callable[[F], F]:
    def register(fn: F) -> F:
        ROUTES[fn.__name__] = RestRoute(method, path)
        return fn

    return register


@dataclass(frozen=True)
class RestSettings:
    """Where the gateway is and the credential sent to it (`Authorization: Bearer <key>`)."""

    url: str = DEFAULT_URL
    key: str = ""
    timeout_s: float = 60.0
    session: str = ""
    # The caller's `Authorization` header as it came (Herald over HTTP); wins over `key`.
    authorization: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> RestSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "url": env.get("LOREBASE_URL") or DEFAULT_URL,
            "key": env.get("LOREBASE_KEY", ""),
            "session": env.get("LOREBASE_SESSION", ""),
        }
        values.update({name: value for name, value in overrides.items() if value not in (None, "")})
        return cls(**values)


@dataclass
class Reply:
    """A successful answer: status, parsed JSON (or the text of a Markdown answer), headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def revision(self) -> str:
        return self.headers.get("lorebase-revision", "")


def _problem_from(response: httpx.Response) -> Problem:
    try:
        doc = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        text = response.text.strip()[:300] or response.reason_phrase
        return Problem(response.status_code, "error", f"{response.status_code} {text}")
    extra = {k: v for k, v in doc.items() if k not in ("type", "title", "status", "detail", "code")}
    code = str(doc.get("code") or str(doc.get("type", "error")).rsplit("/", 1)[-1])
    return Problem(
        response.status_code,
        code,
        str(doc.get("detail", "")),
        title=str(doc["title"]) if doc.get("title") else None,
        **extra,
    )


def _query(params: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None or value == "" or value is False or value == 0:
            continue
        out[name] = "true" if value is True else str(value)
    return out


def _body(members: Mapping[str, Any]) -> dict[str, Any]:
    """A request body without the members left at their defaults (None, empty)."""
    return {k: v for k, v in members.items() if v is not None and v != "" and v != [] and v != {}}


class RestClient:
    """Async client of the gateway's REST API. Keyword-only arguments; `Problem` on failure."""

    def __init__(self, settings: RestSettings, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        headers = {"User-Agent": "lorebase-client"}
        if settings.authorization:
            headers["Authorization"] = settings.authorization
        elif settings.key:
            headers["Authorization"] = f"Bearer {settings.key}"
        if settings.session:
            headers["Lorebase-Session"] = settings.session
        self._http = httpx.AsyncClient(
            base_url=settings.url.rstrip("/"),
            headers=headers,
            timeout=settings.timeout_s,
            transport=transport,
            trust_env=False,
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> RestClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- plumbing --------------------------------------------------------------------------------

    @staticmethod
    def path(name: str, **params: str) -> str:
        template = ROUTES[name].path
        for member, value in params.items():
            if not value:
                raise Problem(400, "invalid-parameter", f"{member} must not be empty", parameter=member)
            safe = "/" if member == "branch" else ""
            template = template.replace("{" + member + "}", quote(str(value), safe=safe))
        return template

    async def _send(
        self,
        name: str,
        *,
        path: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        route = ROUTES[name]
        url = self.path(name, **(path or {}))
        content = None
        sent_headers = dict(headers or {})
        if body is not None:
            content = orjson.dumps(body)
            sent_headers["Content-Type"] = "application/json"
        try:
            response = await self._http.request(
                route.method, url, params=_query(query or {}), content=content, headers=sent_headers
            )
        except httpx.TimeoutException as exc:
            raise Problem(503, "unreachable", f"{self.settings.url} did not answer in time ({exc})") from exc
        except httpx.HTTPError as exc:
            raise Problem(
                503, "unreachable", f"cannot reach Lorebase at {self.settings.url} ({exc}); set LOREBASE_URL"
            ) from exc
        if response.status_code >= 400:
            raise _problem_from(response)
        content_type = response.headers.get("content-type", "")
        parsed: Any
        if not response.content:
            parsed = None
        elif "json" in content_type:
            parsed = orjson.loads(response.content)
        else:
            parsed = response.text
        return Reply(response.status_code, parsed, response.headers)

    # -- health and administration ---------------------------------------------------------------

    @_route("GET", "/health")
    async def health(self) -> Any:
        try:
            return (await self._send("health")).body
        except Problem as problem:
            if problem.status == 503 and problem.code != "unreachable":
                return {"status": "unavailable", **problem.extra}
            raise

    @_route("POST", API + "/principals")
    async def create_principal(self, *, id: str, type: str, name: str = "", tenant: str = "") -> Any:
        body = _body({"id": id, "type": type, "name": name, "tenant": tenant})
        return (await self._send("create_principal", body=body)).body

    @_route("POST", API + "/principals/{principal}/keys")
    async def create_key(self, *, principal: str) -> Any:
        return (await self._send("create_key", path={"principal": principal})).body

    @_route("DELETE", API + "/principals/{principal}/keys/{key_id}")
    async def revoke_key(self, *, principal: str, key_id: str) -> Any:
        return (await self._send("revoke_key", path={"principal": principal, "key_id": key_id})).body

    @_route("POST", API + "/sessions/{session}/notes")
    async def add_session_note(self, *, session: str, text: str) -> Any:
        return (await self._send("add_session_note", path={"session": session}, body={"text": text})).body

    @_route("GET", API + "/sessions/{session}")
    async def get_session(self, *, session: str) -> Any:
        return (await self._send("get_session", path={"session": session})).body

    @_route("GET", API + "/domains")
    async def list_domains(self) -> Any:
        return (await self._send("list_domains")).body

    @_route("POST", API + "/domains")
    async def create_domain(
        self, *, name: str, schema: Any, settings: Any = None, default_branch: str = ""
    ) -> Any:
        body = _body({"name": name, "schema": schema, "settings": settings, "default_branch": default_branch})
        return (await self._send("create_domain", body=body)).body

    @_route("GET", DOMAIN)
    async def get_domain(self, *, domain: str) -> Any:
        return (await self._send("get_domain", path={"domain": domain})).body

    @_route("POST", DOMAIN + "/grants")
    async def create_grant(
        self, *, domain: str, principal: str, role: str, branches: list[str] | None = None, kinds: Any = None
    ) -> Any:
        body = _body({"principal": principal, "role": role, "branches": branches, "kinds": kinds})
        return (await self._send("create_grant", path={"domain": domain}, body=body)).body

    @_route("DELETE", DOMAIN + "/grants/{grant_id}")
    async def delete_grant(self, *, domain: str, grant_id: str) -> Any:
        return (await self._send("delete_grant", path={"domain": domain, "grant_id": grant_id})).body

    # -- schema and branches ---------------------------------------------------------------------

    @_route("GET", DOMAIN + "/schema")
    async def get_schema(self, *, domain: str, branch: str = "") -> Any:
        return (await self._send("get_schema", path={"domain": domain}, query={"branch": branch})).body

    @_route("POST", DOMAIN + "/branches")
    async def create_branch(
        self,
        *,
        domain: str,
        name: str,
        from_branch: str = "",
        mode: str = "",
        protected: bool | None = None,
        required_approvals: int | None = None,
    ) -> Any:
        body = _body(
            {
                "name": name,
                "from": from_branch,
                "mode": mode,
                "protected": protected,
                "required_approvals": required_approvals,
            }
        )
        return (await self._send("create_branch", path={"domain": domain}, body=body)).body

    @_route("GET", DOMAIN + "/branches")
    async def list_branches(self, *, domain: str) -> Any:
        return (await self._send("list_branches", path={"domain": domain})).body

    @_route("GET", DOMAIN + "/branches/{branch}")
    async def get_branch(self, *, domain: str, branch: str) -> Any:
        return (await self._send("get_branch", path={"domain": domain, "branch": branch})).body

    @_route("PATCH", DOMAIN + "/branches/{branch}")
    async def update_branch(
        self,
        *,
        domain: str,
        branch: str,
        protected: bool | None = None,
        required_approvals: int | None = None,
    ) -> Any:
        body = _body({"protected": protected, "required_approvals": required_approvals})
        reply = await self._send("update_branch", path={"domain": domain, "branch": branch}, body=body)
        return reply.body

    @_route("DELETE", DOMAIN + "/branches/{branch}")
    async def delete_branch(self, *, domain: str, branch: str) -> Any:
        return (await self._send("delete_branch", path={"domain": domain, "branch": branch})).body

    # -- proposals -------------------------------------------------------------------------------

    @_route("POST", DOMAIN + "/proposals")
    async def create_proposal(
        self, *, domain: str, source: str, target: str = "", title: str = "", description: str = ""
    ) -> Any:
        body = _body({"source": source, "target": target, "title": title, "description": description})
        return (await self._send("create_proposal", path={"domain": domain}, body=body)).body

    @_route("GET", DOMAIN + "/proposals")
    async def list_proposals(
        self, *, domain: str, status: str = "", assigned: str = "", limit: int = 0, cursor: str = ""
    ) -> Any:
        query = {"status": status, "assigned": assigned, "limit": limit, "cursor": cursor}
        return (await self._send("list_proposals", path={"domain": domain}, query=query)).body

    @_route("GET", PROPOSAL)
    async def get_proposal(self, *, domain: str, proposal: str) -> Any:
        return (await self._send("get_proposal", path={"domain": domain, "proposal": proposal})).body

    @_route("POST", PROPOSAL + "/reviews")
    async def review_proposal(self, *, domain: str, proposal: str, decision: str, comment: str = "") -> Any:
        body = _body({"decision": decision, "comment": comment})
        reply = await self._send("review_proposal", path={"domain": domain, "proposal": proposal}, body=body)
        return reply.body

    @_route("POST", PROPOSAL + "/merge")
    async def merge_proposal(self, *, domain: str, proposal: str) -> Any:
        reply = await self._send("merge_proposal", path={"domain": domain, "proposal": proposal}, body={})
        return reply.body

    @_route("POST", PROPOSAL + "/close")
    async def close_proposal(self, *, domain: str, proposal: str) -> Any:
        reply = await self._send("close_proposal", path={"domain": domain, "proposal": proposal}, body={})
        return reply.body

    @_route("GET", PROPOSAL + "/conflicts")
    async def list_conflicts(self, *, domain: str, proposal: str) -> Any:
        return (await self._send("list_conflicts", path={"domain": domain, "proposal": proposal})).body

    @_route("POST", PROPOSAL + "/conflicts/{conflict}/resolve")
    async def resolve_conflict(
        self, *, domain: str, proposal: str, conflict: str, resolution: str, value: Any = None
    ) -> Any:
        body: dict[str, Any] = {"resolution": resolution}
        if resolution == "value":
            body["value"] = value
        path = {"domain": domain, "proposal": proposal, "conflict": conflict}
        return (await self._send("resolve_conflict", path=path, body=body)).body

    # -- writes ----------------------------------------------------------------------------------

    @_route("POST", DOMAIN + "/operations/{operation}/execute")
    async def execute(self, *, domain: str, operation: str, body: Mapping[str, Any]) -> Reply:
        """The whole answer: callers look at the status (200 committed, 202 proposed) and headers."""
        return await self._send("execute", path={"domain": domain, "operation": operation}, body=dict(body))

    @_route("POST", DOMAIN + "/imports")
    async def import_data(self, *, domain: str, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        reply = await self._send("import_data", path={"domain": domain}, body=dict(body), headers=headers)
        return reply.body

    @_route("POST", DOMAIN + "/sources/{source}/sync")
    async def sync_source(
        self, *, domain: str, source: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        path = {"domain": domain, "source": source}
        return (await self._send("sync_source", path=path, body=dict(body), headers=headers)).body

    @_route("PUT", RECORD + "/embedding")
    async def set_embedding(
        self, *, domain: str, kind: str, key: str, vector: list[float], model: str, branch: str = ""
    ) -> Any:
        body = _body({"vector": vector, "model": model, "branch": branch})
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("set_embedding", path=path, body=body)).body

    # -- governance ------------------------------------------------------------------------------

    @_route("GET", DOMAIN + "/suggestions")
    async def list_suggestions(self, *, domain: str, status: str = "") -> Any:
        reply = await self._send("list_suggestions", path={"domain": domain}, query={"status": status})
        return reply.body

    @_route("POST", DOMAIN + "/suggestions/{id}/accept")
    async def accept_suggestion(self, *, domain: str, id: str) -> Any:
        return (await self._send("accept_suggestion", path={"domain": domain, "id": id}, body={})).body

    @_route("POST", DOMAIN + "/suggestions/{id}/dismiss")
    async def dismiss_suggestion(self, *, domain: str, id: str) -> Any:
        return (await self._send("dismiss_suggestion", path={"domain": domain, "id": id}, body={})).body

    # -- reads -----------------------------------------------------------------------------------

    @_route("GET", RECORD)
    async def get_record(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        links: bool = False,
        lineage: bool = False,
    ) -> Any:
        query = {"branch": branch, "at": at, "links": links, "lineage": lineage}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_record", path=path, query=query)).body

    @_route("GET", RECORD + "/links/{relation}")
    async def get_links(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        relation: str,
        branch: str = "",
        at: str = "",
        limit: int = 0,
        cursor: str = "",
    ) -> Any:
        query = {"branch": branch, "at": at, "limit": limit, "cursor": cursor}
        path = {"domain": domain, "kind": kind, "key": key, "relation": relation}
        return (await self._send("get_links", path=path, query=query)).body

    @_route("GET", RECORD + "/history")
    async def get_history(
        self,
        *,
        domain: str,
        kind: str,
        key: str,
        branch: str = "",
        at: str = "",
        values: bool = False,
        limit: int = 0,
        cursor: str = "",
    ) -> Any:
        query = {"branch": branch, "at": at, "values": values, "limit": limit, "cursor": cursor}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_history", path=path, query=query)).body

    @_route("GET", RECORD + "/lineage")
    async def get_lineage(self, *, domain: str, kind: str, key: str, branch: str = "", at: str = "") -> Any:
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("get_lineage", path=path, query={"branch": branch, "at": at})).body

    @_route("GET", RECORD + "/explain")
    async def explain(
        self, *, domain: str, kind: str, key: str, branch: str = "", at: str = "", markdown: bool = False
    ) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        path = {"domain": domain, "kind": kind, "key": key}
        return (await self._send("explain", path=path, query=query)).body

    @_route("GET", DOMAIN + "/diff")
    async def diff(self, *, domain: str, from_revision: str, to_revision: str, branch: str = "") -> Any:
        query = {"from": from_revision, "to": to_revision, "branch": branch}
        return (await self._send("diff", path={"domain": domain}, query=query)).body

    @_route("GET", DOMAIN + "/health")
    async def get_health(self, *, domain: str, branch: str = "", at: str = "", markdown: bool = False) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        return (await self._send("get_health", path={"domain": domain}, query=query)).body

    @_route("GET", DOMAIN + "/kinds/{kind}/health")
    async def get_kind_health(
        self, *, domain: str, kind: str, branch: str = "", at: str = "", markdown: bool = False
    ) -> Any:
        query = {"branch": branch, "at": at, "format": "markdown" if markdown else ""}
        reply = await self._send("get_kind_health", path={"domain": domain, "kind": kind}, query=query)
        return reply.body

    async def _post_read(self, name: str, domain: str, body: Mapping[str, Any]) -> Any:
        return (await self._send(name, path={"domain": domain}, body=dict(body))).body

    @_route("POST", DOMAIN + "/context")
    async def context(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        """The pack: a JSON object, or the Markdown text with `"format": "markdown"`."""
        return await self._post_read("context", domain, body)

    @_route("POST", DOMAIN + "/neighborhood")
    async def neighborhood(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("neighborhood", domain, body)

    @_route("POST", DOMAIN + "/traverse")
    async def traverse(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("traverse", domain, body)

    @_route("POST", DOMAIN + "/search")
    async def search(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("search", domain, body)

    @_route("POST", DOMAIN + "/resolve")
    async def resolve(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("resolve", domain, body)

    @_route("POST", DOMAIN + "/query")
    async def query(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return await self._post_read("query", domain, body)

    # -- the change feed -------------------------------------------------------------------------

    @_route("GET", DOMAIN + "/branches/{branch}/changes")
    async def changes(
        self, *, domain: str, branch: str, since: str = "", kinds: str = "", limit: int = 0
    ) -> Any:
        query = {"since": since, "kinds": kinds, "limit": limit}
        return (await self._send("changes", path={"domain": domain, "branch": branch}, query=query)).body

    @_route("GET", DOMAIN + "/branches/{branch}/events")
    async def events(
        self, *, domain: str, branch: str, kinds: str = "", last_event_id: str = ""
    ) -> AsyncIterator[dict[str, Any]]:
        """The event stream: one dict per frame, `{"id", "event", "data"}` with `data` parsed."""
        url = self.path("events", domain=domain, branch=branch)
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        timeout = httpx.Timeout(self.settings.timeout_s, read=None)
        try:
            async with self._http.stream(
                "GET", url, params=_query({"kinds": kinds}), headers=headers, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _problem_from(response)
                frame: dict[str, Any] = {}
                async for line in response.aiter_lines():
                    if line == "":
                        if "data" in frame:
                            frame["data"] = orjson.loads(frame["data"])
                            yield frame
                        frame = {}
                    elif line.startswith(":"):
                        continue
                    else:
                        name, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if name == "data" and "data" in frame:
                            frame["data"] += "\n" + value
                        elif name in ("id", "event", "data"):
                            frame[name] = value
        except httpx.HTTPError as exc:
            raise Problem(
                503, "unreachable", f"the event stream from {self.settings.url} ended ({exc})"
            ) from exc

    # -- agent memory ----------------------------------------------------------------------------

    async def _memory(self, name: str, body: Any = None, key: str = "", **path: str) -> Any:
        headers = {"Idempotency-Key": key} if key else None
        return (await self._send(name, path=path, body=body, headers=headers)).body

    @_route("POST", API + "/memory/records")
    async def create_memory(self, *, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        return await self._memory("create_memory", dict(body), idempotency_key)

    @_route("POST", API + "/memory/derivations")
    async def derive_memory(self, *, body: Mapping[str, Any], idempotency_key: str = "") -> Any:
        return await self._memory("derive_memory", dict(body), idempotency_key)

    @_route("PATCH", API + "/memory/records/{record_id}")
    async def update_memory(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("update_memory", dict(body), idempotency_key, record_id=record_id)

    @_route("DELETE", API + "/memory/records/{record_id}")
    async def delete_memory(
        self, *, record_id: str, body: Mapping[str, Any] | None = None, idempotency_key: str = ""
    ) -> Any:
        return await self._memory("delete_memory", dict(body or {}), idempotency_key, record_id=record_id)

    @_route("PUT", API + "/memory/records/{record_id}/embedding")
    async def attach_memory_embedding(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("attach_memory_embedding", dict(body), idempotency_key, record_id=record_id)

    @_route("POST", API + "/memory/records/{record_id}/reviews")
    async def review_memory(
        self, *, record_id: str, body: Mapping[str, Any], idempotency_key: str = ""
    ) -> Any:
        return await self._memory("review_memory", dict(body), idempotency_key, record_id=record_id)

    @_route("GET", API + "/memory/records/{record_id}")
    async def get_memory(self, *, record_id: str) -> Any:
        return await self._memory("get_memory", record_id=record_id)

    @_route("POST", API + "/memory/query")
    async def query_memory(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("query_memory", dict(body))

    @_route("POST", API + "/memory/grants")
    async def create_memory_grant(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("create_memory_grant", dict(body))

    @_route("DELETE", API + "/memory/grants/{grant_id}")
    async def delete_memory_grant(self, *, grant_id: str) -> Any:
        return await self._memory("delete_memory_grant", grant_id=grant_id)

    @_route("POST", API + "/memory/changes")
    async def read_memory_changes(self, *, body: Mapping[str, Any]) -> Any:
        return await self._memory("read_memory_changes", dict(body))

    @_route("PUT", API + "/memory/checkpoints/{consumer}")
    async def save_memory_checkpoint(self, *, consumer: str, body: Mapping[str, Any]) -> Any:
        return await self._memory("save_memory_checkpoint", dict(body), consumer=consumer)

    @_route("GET", API + "/memory/checkpoints/{consumer}")
    async def get_memory_checkpoint(self, *, consumer: str) -> Any:
        return await self._memory("get_memory_checkpoint", consumer=consumer)

    @_route("GET", API + "/memory/checkpoints")
    async def list_memory_checkpoints(self, *, limit: int | None = None, after: str | None = None) -> Any:
        query = {k: v for k, v in (("limit", limit), ("after", after)) if v is not None}
        return (await self._send("list_memory_checkpoints", query=query)).body

    @_route("DELETE", API + "/memory/checkpoints/{consumer}")
    async def delete_memory_checkpoint(self, *, consumer: str, body: Mapping[str, Any] | None = None) -> Any:
        return await self._memory("delete_memory_checkpoint", dict(body) if body else None, consumer=consumer)

    # -- webhooks --------------------------------------------------------------------------------

    @_route("POST", DOMAIN + "/webhooks")
    async def create_webhook(self, *, domain: str, body: Mapping[str, Any]) -> Any:
        return (await self._send("create_webhook", path={"domain": domain}, body=dict(body))).body

    @_route("GET", DOMAIN + "/webhooks")
    async def list_webhooks(self, *, domain: str) -> Any:
        return (await self._send("list_webhooks", path={"domain": domain})).body

    @_route("PATCH", DOMAIN + "/webhooks/{id}")
    async def update_webhook(self, *, domain: str, id: str, body: Mapping[str, Any]) -> Any:
        return (await self._send("update_webhook", path={"domain": domain, "id": id}, body=dict(body))).body

    @_route("DELETE", DOMAIN + "/webhooks/{id}")
    async def delete_webhook(self, *, domain: str, id: str) -> Any:
        return (await self._send("delete_webhook", path={"domain": domain, "id": id})).body


__all__ = ["DEFAULT_DOMAIN", "DEFAULT_URL", "ROUTES", "Reply", "RestClient", "RestRoute", "RestSettings"]
