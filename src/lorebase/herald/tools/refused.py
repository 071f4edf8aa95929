"""The REST endpoints Herald has no tool for, each with the reason (`NOT_IN_HERALD`); the parity
test (tests/unit/test_parity.py) fails on an endpoint that is neither called by a tool nor listed here."""

from __future__ import annotations

from lorebase.clients.rest import REST_ONLY

_ADMIN = "administration (admin key or domain.settings) is not an agent's job; the CLI has it"
_REVIEW = "reviewing, merging and closing are a person's decision (lorebase proposals); agents propose"
_BRANCHES = "agents get their task branch from lorebase_execute with a task; the CLI manages branches"
_BULK = "bulk loads are not agent writes: agents write through Operations (lorebase_execute)"

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

__all__ = ["NOT_IN_HERALD"]
