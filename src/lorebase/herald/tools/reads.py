"""The tools a task starts with: the context pack, search, the schema, resolve and query."""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.herald.tools.declare import (
    AT,
    BRANCH,
    FORMAT,
    FORMAT_WHY,
    KIND,
    Answer,
    Arg,
    json_answer,
    members,
    tool,
    wants_markdown,
)


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
    own={"format": FORMAT_WHY},
)
async def _context(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    body = members(
        arguments, "refs", "search", "query", "lens", "traits", "relations", "depth", "budget_tokens", "since"
    )
    body.update(members(arguments, "branch"))
    if wants_markdown(arguments):
        return Answer(await client.context(domain=domain, body={**body, "format": "markdown"}))
    return json_answer(await client.context(domain=domain, body=body))


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
    body = members(arguments, "text", "kinds", "traits", "lens", "limit", "branch")
    return json_answer(await client.search(domain=domain, body=body))


@tool(
    "lorebase_schema",
    "The schema you may read: Kinds with their Attributes, Relations, Traits, lenses and Operations "
    "(with their parameters: what lorebase_execute can run).",
    {"branch": BRANCH},
    calls=("get_schema",),
)
async def _schema(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    return json_answer(await client.get_schema(domain=domain, branch=arguments.get("branch", "")))


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
    body = members(arguments, "text", "kinds", "branch", "at")
    if "record_misses" in arguments:
        body["record_misses"] = bool(arguments["record_misses"])
    return json_answer(await client.resolve(domain=domain, body=body))


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
    return json_answer(await client.query(domain=domain, body=members(arguments, *QUERY_MEMBERS)))
