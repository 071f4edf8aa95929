"""Herald's tools: each one REST call (or two) of docs/rest.md, with a JSON schema for its input.

A tool gets the REST client of the caller (its credential, never Herald's own) and the Domain it
defaults to, and answers text: Markdown where the REST call has a Markdown format (context, explain,
health), else the JSON answer. Problems come back as tool errors carrying the problem document.

A tool's arguments are made from the declarations of the endpoints it calls (`calls`), the ones
/openapi.json is made from: each argument is the declared parameter or body member of the same name
(`aliases` for another name), with its type, enum, range, length and pattern (`for_tool` says how a
declared schema becomes an argument), so a tool cannot describe what the server refuses. A tool says
only what a model reads (`Arg`: a description, and Herald's own default where it has one). An
argument the endpoints do not declare, or one whose shape Herald changes, is Herald's own and says
why (`own`); a tool that names a member no endpoint declares and does not say so fails at import.
tests/unit/test_herald_tools.py checks every argument against the declarations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from lorebase.clients.rest import REST_ONLY, RestClient
from lorebase.contract import BY_NAME
from lorebase.contract.schemas import for_generators


@dataclass(frozen=True)
class Answer:
    """What a tool answers: text for the model, and the JSON answer when there is one."""

    text: str
    data: Any = None


@dataclass(frozen=True)
class HeraldTool:
    name: str
    description: str
    properties: dict[str, Any]  # each argument's JSON Schema (made by `tool` from the declarations)
    run: Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]
    calls: tuple[str, ...]  # the endpoints it calls (lorebase.contract), whose members its arguments are
    own: dict[str, str]  # its arguments that are Herald's own, each with why
    aliases: dict[str, str]  # an argument named otherwise than its declared member: argument -> member
    required: tuple[str, ...] = ()
    read_only: bool = True
    # MCP tool annotations: a write tool may update and delete (destructive), and one answered once
    # per idempotency key is idempotent (lorebase_execute derives a key when none is given).
    destructive: bool = False
    idempotent: bool = True

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema


@dataclass(frozen=True)
class Arg:
    """An argument made from the declared member of the same name: what a model reads about it, and
    Herald's own default where it has one (`dry_run` true: Herald writes only when asked)."""

    description: str
    default: Any = None


_NO_NUL = "^[^\\x00]*$"  # every declared string's; it says nothing to a model


def for_tool(schema: Any) -> Any:
    """A declared JSON Schema as a tool argument: a null alternative dropped (a model leaves the
    argument out instead), a nested document named by its type (the description says what goes
    in it; /openapi.json has the whole), descriptions inside it and the pattern that only refuses
    NUL left out. The rest stays as declared: type, enum, range, length, pattern, items."""
    if isinstance(schema, list):
        return [for_tool(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {"type": "object"}
    if "anyOf" in schema:
        kept = [alternative for alternative in schema["anyOf"] if alternative != {"type": "null"}]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        if len(kept) == 1:
            return for_tool({**kept[0], **rest})
        schema = {**rest, "anyOf": kept}
    return {
        key: for_tool(value)
        for key, value in schema.items()
        if key not in ("description", "$defs", "title") and not (key == "pattern" and value == _NO_NUL)
    }


def declared_member(endpoint: str, name: str) -> Any:
    """The declared type of a parameter (by its name in the request) or body member; None when the
    endpoint declares none of that name."""
    declared = BY_NAME[endpoint]
    hint: Any = next((p.type for p in declared.parameters if p.alias == name), None)
    if hint is None and isinstance(declared.body, type) and issubclass(declared.body, msgspec.Struct):
        hint = next((f.type for f in msgspec.structs.fields(declared.body) if f.encode_name == name), None)
    return hint


def declared_argument(calls: tuple[str, ...], name: str) -> dict[str, Any] | None:
    """The argument `name` as the first of `calls` that declares it says (None: none does)."""
    for endpoint in calls:
        hint = declared_member(endpoint, name)
        if hint is not None:
            schema = for_generators(msgspec.json.schema(hint))
            return dict(for_tool(schema))
    return None


DOMAIN = Arg("the Domain (default: the one Herald was started for)")
BRANCH = Arg("the branch (default: the Domain's default branch)")
AT = Arg("read as of this Revision (64 hex digits or a unique prefix of 12+)")
KIND = Arg("a Kind of the schema, as in Supplier")
KEY = Arg("the Record's key, as in S-1001")
FORMAT = {
    "type": "string",
    "enum": ["markdown", "json"],
    "default": "markdown",
    "description": "answer format",
}
# Why FORMAT is Herald's own: it answers Markdown unless asked, and names JSON `json` where REST's
# default is the empty format.
_FORMAT = "Herald answers Markdown unless asked for json; REST's default is JSON"


def _json(data: Any) -> Answer:
    return Answer(json.dumps(data, ensure_ascii=False, separators=(",", ":")), data)


def _members(arguments: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: arguments[name] for name in names if arguments.get(name) not in (None, "", [])}


def _markdown(arguments: dict[str, Any]) -> bool:
    return arguments.get("format", "markdown") == "markdown"


TOOLS: list[HeraldTool] = []


def tool(
    name: str,
    description: str,
    arguments: Mapping[str, Arg | dict[str, Any]],
    *,
    calls: tuple[str, ...],
    own: dict[str, str] | None = None,
    aliases: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
    read_only: bool = True,
    destructive: bool = False,
    idempotent: bool = True,
) -> Callable[[Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]], None]:
    """Register a tool calling `calls`; each `Arg` becomes the declared member of its name (or
    alias), each schema written out must be in `own`, with why."""
    own = own or {}
    aliases = aliases or {}
    properties: dict[str, Any] = {}
    for argument, given in {"domain": DOMAIN, **arguments}.items():
        if isinstance(given, dict):
            if argument not in own:
                raise TypeError(f"{name}.{argument}: written out; make it an Arg or say why in own")
            properties[argument] = given
            continue
        schema = declared_argument(calls, aliases.get(argument, argument))
        if schema is None:
            raise TypeError(f"{name}.{argument}: no endpoint of {calls} declares it")
        schema["description"] = given.description
        if given.default is not None:
            schema["default"] = given.default
        properties[argument] = schema

    def register(run: Callable[[RestClient, str, dict[str, Any]], Awaitable[Answer]]) -> None:
        TOOLS.append(
            HeraldTool(
                name,
                description,
                properties,
                run,
                calls,
                own,
                aliases,
                required,
                read_only,
                destructive,
                idempotent,
            )
        )

    return register


# -- reading -----------------------------------------------------------------------------------------


@tool(
    "lorebase_context",
    "Start here: one context pack for the Records a task is about (exactly one of refs, search, query): "
    "the Records, their neighborhood, the schema of what is in it, recent changes and lineage, within a "
    "token budget. Markdown by default; its header names the revision to pass as expected_head.",
    {
        "refs": Arg("seed Records as Kind/key, as in Supplier/S-1001"),
        "search": Arg("seed Records found by this text"),
        "query": Arg("seed Records of a query document (see lorebase_query)"),
        "lens": Arg("a lens of the schema (lorebase_schema lists them), as in supplier_risk"),
        "traits": Arg("limit neighbors and seeds to the Kinds implementing these Traits"),
        "relations": Arg("Relation names to follow"),
        "depth": Arg("neighborhood depth; 0 for the seeds alone"),
        "budget_tokens": Arg("estimated token budget"),
        "since": Arg("recent changes after this Revision"),
        "branch": BRANCH,
        "format": FORMAT,
    },
    calls=("context",),
    own={"format": _FORMAT},
)
async def _context(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    body = _members(
        arguments, "refs", "search", "query", "lens", "traits", "relations", "depth", "budget_tokens", "since"
    )
    body.update(_members(arguments, "branch"))
    if _markdown(arguments):
        return Answer(await client.context(domain=domain, body={**body, "format": "markdown"}))
    return _json(await client.context(domain=domain, body=body))


@tool(
    "lorebase_search",
    "Records by text, limited to Kinds, Traits or a lens; ranked, with their values.",
    {
        "text": Arg("the words to look for"),
        "kinds": Arg("search these Kinds"),
        "traits": Arg("search the Kinds implementing these Traits"),
        "lens": Arg("search the Kinds of this lens (when neither kinds nor traits is given)"),
        "limit": Arg("a page of at most this many"),
        "branch": BRANCH,
    },
    required=("text",),
    calls=("search",),
)
async def _search(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    body = _members(arguments, "text", "kinds", "traits", "lens", "limit", "branch")
    return _json(await client.search(domain=domain, body=body))


@tool(
    "lorebase_schema",
    "The schema you may read: Kinds with their Attributes, Relations, Traits, lenses and Operations "
    "(with their parameters: what lorebase_execute can run).",
    {"branch": BRANCH},
    calls=("get_schema",),
)
async def _schema(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    return _json(await client.get_schema(domain=domain, branch=arguments.get("branch", "")))


@tool(
    "lorebase_resolve",
    "Ground the words of a question in the schema and the stored values: candidate Kinds, Attributes, "
    "Relations, values, Records (by name or key) and comparisons, each with a ready query predicate, "
    "and hints (count, group_by, order_by). Resolve first, then write lorebase_query from the "
    "predicates and hints. Read coverage before concluding that nothing matches.",
    {
        "text": Arg("the words of the question"),
        "kinds": Arg("only these Kinds"),
        "record_misses": Arg("keep unmatched words", default=True),
        "branch": BRANCH,
        "at": AT,
    },
    required=("text",),
    calls=("resolve",),
)
async def _resolve(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    body = _members(arguments, "text", "kinds", "branch", "at")
    if "record_misses" in arguments:
        body["record_misses"] = bool(arguments["record_misses"])
    return _json(await client.resolve(domain=domain, body=body))


QUERY_MEMBERS = (
    "kind",
    "trait",
    "where",
    "select",
    "order_by",
    "limit",
    "cursor",
    "aggregate",
    "branch",
    "at",
)


@tool(
    "lorebase_query",
    'Records matching a filter (docs/query.md): {"kind": "Supplier", "where": {"attr": "city", "op": '
    '"eq", "value": "Poznan"}, "select": ["legal_name", "risk_score"]}; "aggregate": {"group_by": '
    '"attr"} counts per value. The answer carries coverage: read its notes before saying "none".',
    {
        "kind": KIND,
        "trait": Arg("a Trait in place of kind"),
        "where": Arg("a predicate, or and/or/not of predicates"),
        "select": Arg("the Attributes to answer"),
        "order_by": Arg("an Attribute name, or a list of them; -name sorts descending (-risk_score)"),
        "limit": Arg("a page of at most this many"),
        "cursor": Arg("next_cursor of the previous page"),
        "aggregate": Arg('{"count": true} or {"group_by": "attr"}'),
        "branch": BRANCH,
        "at": AT,
    },
    calls=("query",),
)
async def _query(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    return _json(await client.query(domain=domain, body=_members(arguments, *QUERY_MEMBERS)))


RECORD = {"kind": KIND, "key": KEY, "branch": BRANCH, "at": AT}


@tool(
    "lorebase_record",
    "One Record with its values, Link counts per Relation and the Revision behind each value.",
    RECORD,
    required=("kind", "key"),
    calls=("get_record",),
)
async def _record(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    answer = await client.get_record(
        domain=domain, **_members(arguments, "kind", "key", "branch", "at"), links=True, lineage=True
    )
    return _json(answer)


@tool(
    "lorebase_links",
    "The Links of a Record along one Relation (its name or inverse name), with their values.",
    {
        **RECORD,
        "relation": Arg("a Relation's name or inverse name"),
        "limit": Arg("a page of at most this many"),
        "cursor": Arg("next_cursor"),
    },
    required=("kind", "key", "relation"),
    calls=("get_links",),
)
async def _links(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    names = ("kind", "key", "relation", "branch", "at", "limit", "cursor")
    return _json(await client.get_links(domain=domain, **_members(arguments, *names)))


@tool(
    "lorebase_neighborhood",
    "The graph around some Records: Records within depth hops and the Links between them.",
    {
        "refs": Arg("the start Records as Kind/key"),
        "depth": Arg("hops from the start Records"),
        "relations": Arg("Relation names to follow"),
        "values": Arg("false for headers and Link ends only"),
        "branch": BRANCH,
        "at": AT,
    },
    required=("refs",),
    calls=("neighborhood",),
)
async def _neighborhood(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    body = _members(arguments, "refs", "depth", "relations", "branch", "at")
    if "values" in arguments:
        body["values"] = bool(arguments["values"])
    return _json(await client.neighborhood(domain=domain, body=body))


@tool(
    "lorebase_traverse",
    "Follow a path of Relations from some Records: the Records at its end.",
    {
        "from": Arg("the start Records as Kind/key"),
        "path": Arg("the Relation names, in order"),
        "branch": BRANCH,
        "at": AT,
    },
    required=("from", "path"),
    calls=("traverse",),
)
async def _traverse(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    return _json(
        await client.traverse(domain=domain, body=_members(arguments, "from", "path", "branch", "at"))
    )


@tool(
    "lorebase_explain",
    "Why a Record exists and why its values are what they are: the Revision that created it, per "
    "Attribute the change behind its value, its Links and the merged Proposals. Ask before acting on "
    "a surprising value.",
    {**RECORD, "format": FORMAT},
    required=("kind", "key"),
    calls=("explain",),
    own={"format": _FORMAT},
)
async def _explain(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    common = _members(arguments, "kind", "key", "branch", "at")
    if _markdown(arguments):
        return Answer(await client.explain(domain=domain, **common, format="markdown"))
    return _json(await client.explain(domain=domain, **common))


@tool(
    "lorebase_history",
    "Every change of one Record on a branch, newest first: author, time, message, origin and the "
    "Attributes changed, with the extraction evidence of extracted values (values=true adds the "
    "changed values before and after).",
    {
        **RECORD,
        "values": Arg("true adds the changed values before and after"),
        "limit": Arg("a page of at most this many"),
        "cursor": Arg("next_cursor"),
    },
    required=("kind", "key"),
    calls=("get_history",),
)
async def _history(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    answer = await client.get_history(
        domain=domain,
        **_members(arguments, "kind", "key", "branch", "at", "limit", "cursor"),
        values=bool(arguments.get("values")),
    )
    return _json(answer)


@tool(
    "lorebase_lineage",
    "Where each current value of a Record came from: the Revision, actor, Operation, import or "
    "Source, the extraction evidence (document, span, model, prompt version, confidence) of an "
    "extracted value, and the Proposal that brought it.",
    RECORD,
    required=("kind", "key"),
    calls=("get_lineage",),
)
async def _lineage(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    return _json(
        await client.get_lineage(domain=domain, **_members(arguments, "kind", "key", "branch", "at"))
    )


@tool(
    "lorebase_health",
    "How sound the data is before you build on it: per Kind violations and duplicates, per Relation "
    "orphans and required-relation gaps. Give kind for one Kind.",
    {"kind": KIND, "branch": BRANCH, "at": AT, "format": FORMAT},
    calls=("get_kind_health", "get_health"),
    own={"format": _FORMAT},
)
async def _health(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    common = _members(arguments, "branch", "at")
    markdown = _markdown(arguments)
    common["format"] = "markdown" if markdown else ""
    if arguments.get("kind"):
        answer = await client.get_kind_health(domain=domain, kind=arguments["kind"], **common)
    else:
        answer = await client.get_health(domain=domain, **common)
    return Answer(answer) if markdown else _json(answer)


@tool(
    "lorebase_diff",
    "What changed between two Revisions of a branch: Records and Links added, removed and changed.",
    {"from": Arg("the earlier Revision"), "to": Arg("the later Revision"), "branch": BRANCH},
    required=("from", "to"),
    calls=("diff",),
)
async def _diff(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    answer = await client.diff(
        domain=domain,
        from_revision=arguments["from"],
        to_revision=arguments["to"],
        branch=arguments.get("branch", ""),
    )
    return _json(answer)


@tool(
    "lorebase_changes",
    "The Revisions committed on a branch after since (a revision from a context pack), oldest first, "
    "with the changed Kinds and keys: refresh only what changed. Continue with next_since.",
    {
        "branch": Arg("the branch (default main)"),
        "since": Arg("a Revision id; without it, the latest Revisions"),
        "kinds": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 512},
            "description": "only Revisions changing these Kinds",
        },
        "limit": Arg("a page of at most this many"),
    },
    calls=("changes",),
    own={"kinds": "a list, which Herald sends as REST's comma-separated kinds"},
)
async def _changes(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    answer = await client.changes(
        domain=domain,
        branch=arguments.get("branch") or "main",
        since=arguments.get("since", ""),
        kinds=",".join(arguments.get("kinds") or []),
        limit=int(arguments.get("limit") or 0),
    )
    return _json(answer)


@tool(
    "lorebase_proposals",
    "Follow the Proposals your writes opened: one by id, or the list (status open by default; "
    "assigned=me for those whose stewards include you).",
    {
        "proposal": Arg("a Proposal id (prp_...)"),
        "status": Arg("open (the default), merged, closed or all"),
        "assigned": Arg("me: those whose stewards include you"),
        "limit": Arg("a page of at most this many"),
        "cursor": Arg("next_cursor"),
    },
    calls=("get_proposal", "list_proposals"),
)
async def _proposals(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    if arguments.get("proposal"):
        return _json(await client.get_proposal(domain=domain, proposal=arguments["proposal"]))
    answer = await client.list_proposals(
        domain=domain,
        status=arguments.get("status", ""),
        assigned=arguments.get("assigned", ""),
        limit=arguments.get("limit") or None,
        cursor=arguments.get("cursor", ""),
    )
    return _json(answer)


@tool(
    "lorebase_reconciliation",
    "Records likely to be the same thing (same unique value, same or similar title within a Kind): one "
    "candidate by id with both Records, or the list (open by default; assigned=me for the Kinds you "
    "steward). Each has its evidence and score; lorebase_reconcile accepts or dismisses one.",
    {
        "candidate": Arg("a candidate id (rcn_...)"),
        "status": Arg("open (the default), accepted, dismissed or all"),
        "kind": KIND,
        "assigned": Arg("me: the Kinds you steward"),
        "limit": Arg("a page of at most this many"),
        "cursor": Arg("next_cursor"),
    },
    calls=("get_reconciliation", "list_reconciliation"),
    aliases={"candidate": "id"},
)
async def _reconciliation(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    if arguments.get("candidate"):
        return _json(await client.get_reconciliation(domain=domain, id=arguments["candidate"]))
    answer = await client.list_reconciliation(
        domain=domain,
        status=arguments.get("status", ""),
        kind=arguments.get("kind", ""),
        assigned=arguments.get("assigned", ""),
        limit=arguments.get("limit") or None,
        cursor=arguments.get("cursor", ""),
    )
    return _json(answer)


# -- writing -----------------------------------------------------------------------------------------


def idempotency_key(domain: str, arguments: dict[str, Any]) -> str:
    """The key of a write that did not name one: the same request gets the same key, so a retry by
    the model (or by Herald's caller) never executes twice."""
    digest = hashlib.sha256(
        json.dumps(
            [domain, {k: v for k, v in arguments.items() if k not in ("dry_run", "domain")}],
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
    ).hexdigest()
    return f"herald-{digest[:40]}"


@tool(
    "lorebase_execute",
    "The only way to write: execute an Operation of the schema. Dry run by default (dry_run: true "
    "answers the edits and violations and stores nothing); send dry_run: false to write. Name a task "
    "(a short slug) and an intent: a write that needs review then opens a Proposal for a person to "
    "review. Pass expected_head (the revision of your context pack) to fail instead of overwriting a "
    "newer state. An idempotency_key is derived from the request when you give none.",
    {
        "operation": Arg("the Operation's name (lorebase_schema lists them)"),
        "parameters": Arg("the Operation's parameters"),
        "dry_run": Arg("false to write", default=True),
        "task": Arg("a short slug naming the piece of work, as in q4-audit"),
        "intent": Arg("what you are after, in a sentence or two (needs task)"),
        "idempotency_key": Arg("1-255 characters; a retry with the same key is answered once"),
        "expected_head": Arg("fail with 409 stale-head if the branch head is another Revision"),
        "message": Arg("the commit message"),
        "branch": BRANCH,
        "auto_merge": Arg("ask for an immediate merge (needs task)"),
    },
    required=("operation",),
    read_only=False,
    destructive=True,  # Operations update and delete Records and Links
    idempotent=True,  # a real execution carries an idempotency key (given or derived): answered once,
    calls=("execute_operation",),
)
async def _execute(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    dry_run = arguments.get("dry_run", True) is not False
    body: dict[str, Any] = {"parameters": arguments.get("parameters") or {}, "dry_run": dry_run}
    body.update(_members(arguments, "task", "intent", "expected_head", "message", "branch"))
    if "auto_merge" in arguments:
        body["auto_merge"] = bool(arguments["auto_merge"])
    if not dry_run:
        body["idempotency_key"] = arguments.get("idempotency_key") or idempotency_key(domain, arguments)
    return _json(await client.execute_operation(domain=domain, operation=arguments["operation"], body=body))


@tool(
    "lorebase_reconcile",
    "Decide a reconciliation candidate. accept: merge the two Records (keep names the survivor; it takes "
    "the other's missing values and Links, the other is deleted and its history says merged_into); on a "
    "protected branch it opens a Proposal on a task branch instead. dismiss: they are not the same "
    "thing (reason required); the pair is never proposed again.",
    {
        "candidate": Arg("the candidate id (rcn_...)"),
        "action": {"type": "string", "enum": ["accept", "dismiss"], "description": "accept or dismiss"},
        "keep": Arg("accept: the key of the Record that survives (record_a's or record_b's)"),
        "reason": Arg("why (required to dismiss)"),
        "task": Arg("accept on a protected branch: a short slug naming the task branch"),
    },
    required=("candidate", "action"),
    read_only=False,
    destructive=True,  # accepting deletes a Record
    idempotent=True,  # a decided candidate is refused (409 candidate-decided), never merged twice,
    calls=("accept_reconciliation", "dismiss_reconciliation"),
    own={"action": "which of the two calls Herald makes"},
    aliases={"candidate": "id"},
)
async def _reconcile(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    if arguments["action"] == "dismiss":
        answer = await client.dismiss_reconciliation(
            domain=domain, id=arguments["candidate"], reason=arguments.get("reason") or ""
        )
    else:
        answer = await client.accept_reconciliation(
            domain=domain, id=arguments["candidate"], **_members(arguments, "keep", "reason", "task")
        )
    return _json(answer)


TOOLS_BY_NAME = {t.name: t for t in TOOLS}

_ADMIN = "administration (admin key or domain.settings) is not an agent's job; the CLI has it"
_REVIEW = "reviewing, merging and closing are a person's decision (lorebase proposals); agents propose"
_BRANCHES = "agents get their task branch from lorebase_execute with a task; the CLI manages branches"
_BULK = "bulk loads are not agent writes: agents write through Operations (lorebase_execute)"

# REST endpoints with no tool, each with the reason; the parity test (tests/unit/test_parity.py)
# fails on an endpoint that is neither called by a tool nor listed here.
_TAGS = "tags are named by people for releases and audits; every tool taking at or since takes one"
NOT_IN_HERALD: dict[str, str] = {
    "health": "the stack's liveness, not the data's: lorebase_health reports the data",
    "create_principal": _ADMIN,
    "create_key": _ADMIN,
    "revoke_key": _ADMIN,
    "create_domain": _ADMIN,
    "list_records": "agents ask for what they need with lorebase_query (filters, coverage) and "
    "lorebase_context; a plain listing of a Kind is for people and exports",
    "list_links": "agents follow Links from a Record (lorebase_neighborhood, lorebase_traverse); a "
    "plain listing of a Relation is for people and exports",
    "get_revision": "agents follow Revisions with lorebase_changes and read values with at; one "
    "Revision's change list is for people (lorebase revision, the web app)",
    "change_schema": "a schema change is a person's decision, made on a branch with the CLI "
    "(lorebase schema-change) or REST; agents read the schema with lorebase_schema",
    "get_schema_change": "a schema change job follows a change set a person sent (lorebase schema "
    "apply polls it); agents read the schema with lorebase_schema",
    "list_schema_changes": "schema change jobs are a person's change sets (lorebase schema jobs); "
    "agents read the schema with lorebase_schema",
    "create_grant": _ADMIN,
    "delete_grant": _ADMIN,
    "list_domains": "Herald serves one default Domain (domain on each tool); lorebase_schema describes it",
    "get_domain": "Herald serves one default Domain (domain on each tool); lorebase_schema describes it",
    "add_session_note": "the agent trace is recorded from Lorebase-Session; notes are for the web app",
    "get_session": "the agent trace is replayed in the web app and the CLI (lorebase sessions)",
    "list_sessions": "the agent trace is replayed in the web app and the CLI (lorebase sessions)",
    "create_branch": _BRANCHES,
    "list_branches": _BRANCHES,
    "get_branch": _BRANCHES,
    "update_branch": _BRANCHES,
    "delete_branch": _BRANCHES,
    "create_tag": _TAGS,
    "list_tags": _TAGS,
    "get_tag": _TAGS,
    "delete_tag": _TAGS,
    "create_erasure": "erasing personal data is a person's legal decision (lorebase erasures), not an agent's",
    "list_erasures": "erasing personal data is a person's legal decision (lorebase erasures), not an agent's",
    "create_proposal": "lorebase_execute with a task opens the Proposal of the task branch",
    "review_proposal": _REVIEW,
    "merge_proposal": _REVIEW,
    "close_proposal": _REVIEW,
    "list_conflicts": _REVIEW,
    "resolve_conflict": _REVIEW,
    "import_data": _BULK,
    "sync_source": _BULK,
    "set_embedding": "embeddings are computed by an indexing job with its model, not by a chat agent",
    "list_suggestions": _ADMIN,
    "accept_suggestion": _ADMIN,
    "dismiss_suggestion": _ADMIN,
    "scan_reconciliation": "Scribe computes the candidates on its schedule; a reviewer runs a scan from the CLI",
    "events": "a tool call answers once: lorebase_changes polls the same events (the CLI follows the stream)",
    "create_webhook": _ADMIN,
    "list_webhooks": _ADMIN,
    "update_webhook": _ADMIN,
    "delete_webhook": _ADMIN,
    **REST_ONLY,
}

__all__ = [
    "NOT_IN_HERALD",
    "TOOLS",
    "TOOLS_BY_NAME",
    "Answer",
    "HeraldTool",
    "idempotency_key",
]
