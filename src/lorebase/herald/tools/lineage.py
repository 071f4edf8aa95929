"""The tools that say why a Record's values are what they are: explain, its history and the
lineage of each current value."""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.herald.tools.declare import (
    FORMAT,
    FORMAT_WHY,
    RECORD,
    Answer,
    Arg,
    json_answer,
    members,
    tool,
    wants_markdown,
)


@tool(
    "lorebase_explain",
    "Why a Record exists and why its values are what they are: the Revision that created it, per "
    "Attribute the change behind its value, its Links and the merged Proposals. Ask before acting on "
    "a surprising value.",
    {**RECORD, "format": FORMAT},
    required=("kind", "key"),
    calls=("explain",),
    own={"format": FORMAT_WHY},
)
async def _explain(client: RestClient, domain: str, arguments: dict[str, Any]) -> Answer:
    common = members(arguments, "kind", "key", "branch", "at")
    if wants_markdown(arguments):
        return Answer(await client.explain(domain=domain, **common, format="markdown"))
    return json_answer(await client.explain(domain=domain, **common))


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
        **members(arguments, "kind", "key", "branch", "at", "limit", "cursor"),
        values=bool(arguments.get("values")),
    )
    return json_answer(answer)


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
    return json_answer(
        await client.get_lineage(domain=domain, **members(arguments, "kind", "key", "branch", "at"))
    )
