"""The tools that read one Record and the graph around it: the Record, its Links along a Relation,
its neighborhood and a traversal along a path of Relations."""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.herald.tools.declare import AT, BRANCH, RECORD, Answer, Arg, json_answer, members, tool


@tool(
    "lorebase_record",
    "One Record with its values, Link counts per Relation and the Revision behind each value.",
    RECORD,
    required=("kind", "key"),
    calls=("get_record",),
)
async def _record(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    answer = await client.get_record(
        domain=domain, **members(arguments, "kind", "key", "branch", "at"), links=True, lineage=True
    )
    return json_answer(answer)


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
    return json_answer(await client.get_links(domain=domain, **members(arguments, *names)))


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
    body = members(arguments, "refs", "depth", "relations", "branch", "at")
    if "values" in arguments:
        body["values"] = bool(arguments["values"])
    return json_answer(await client.neighborhood(domain=domain, body=body))


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
    return json_answer(
        await client.traverse(domain=domain, body=members(arguments, "from", "path", "branch", "at"))
    )
