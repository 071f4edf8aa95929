"""The tools that follow what people review: the Proposals an agent's writes opened, and the
reconciliation candidates (Records likely to be the same thing)."""

from __future__ import annotations

from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.herald.tools.declare import KIND, Answer, Arg, json_answer, tool


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
        return json_answer(await client.get_proposal(domain=domain, proposal=arguments["proposal"]))
    answer = await client.list_proposals(
        domain=domain,
        status=arguments.get("status", ""),
        assigned=arguments.get("assigned", ""),
        limit=arguments.get("limit") or None,
        cursor=arguments.get("cursor", ""),
    )
    return json_answer(answer)


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
        return json_answer(await client.get_reconciliation(domain=domain, id=arguments["candidate"]))
    answer = await client.list_reconciliation(
        domain=domain,
        status=arguments.get("status", ""),
        kind=arguments.get("kind", ""),
        assigned=arguments.get("assigned", ""),
        limit=arguments.get("limit") or None,
        cursor=arguments.get("cursor", ""),
    )
    return json_answer(answer)
