"""The tools that say how sound a branch's data is and what changed on it: health, the diff of two
Revisions and the Revisions committed since one."""

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
    "lorebase_health",
    "How sound the data is before you build on it: per Kind violations and duplicates, per Relation "
    "orphans and required-relation gaps. Give kind for one Kind.",
    {"kind": KIND, "branch": BRANCH, "at": AT, "format": FORMAT},
    calls=("get_kind_health", "get_health"),
    own={"format": FORMAT_WHY},
)
async def _health(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    common = members(arguments, "branch", "at")
    markdown = wants_markdown(arguments)
    common["format"] = "markdown" if markdown else ""
    if arguments.get("kind"):
        answer = await client.get_kind_health(domain=domain, kind=arguments["kind"], **common)
    else:
        answer = await client.get_health(domain=domain, **common)
    return Answer(answer) if markdown else json_answer(answer)


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
    return json_answer(answer)


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
    return json_answer(answer)
