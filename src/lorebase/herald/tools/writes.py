"""The tools that write: lorebase_execute (an Operation of the schema, dry run unless asked, once per
idempotency key, derived by `idempotency_key` when none is given) and lorebase_reconcile (accept
or dismiss a reconciliation candidate)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lorebase.clients.rest import RestClient
from lorebase.herald.tools.declare import BRANCH, Answer, Arg, json_answer, members, tool


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
    body.update(members(arguments, "task", "intent", "expected_head", "message", "branch"))
    if "auto_merge" in arguments:
        body["auto_merge"] = bool(arguments["auto_merge"])
    if not dry_run:
        body["idempotency_key"] = arguments.get("idempotency_key") or idempotency_key(domain, arguments)
    return json_answer(
        await client.execute_operation(domain=domain, operation=arguments["operation"], body=body)
    )


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
            domain=domain, id=arguments["candidate"], **members(arguments, "keep", "reason", "task")
        )
    return json_answer(answer)


__all__ = ["idempotency_key"]
