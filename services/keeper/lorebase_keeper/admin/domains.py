"""Creating a Domain from a schema document (POST /api/v1/domains; only the admin principal).

The document is parsed and checked (docs/schema.md), the setting overrides are checked by the typed
settings model on top of the process settings, and the Domain is inserted with its default branch
(protected, no Revision yet) in one transaction."""

from __future__ import annotations

from typing import Any

from lorebase.config import Settings, check_overrides
from lorebase.contract.admin import NewDomain
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.schema import SchemaError, load_schema
from lorebase_keeper.access import Principal
from lorebase_keeper.domains import check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_store import DomainRow, Txn


async def create_domain(rt: Runtime, principal: Principal, new: NewDomain) -> dict[str, Any]:
    """Create a Domain from its schema document (admin only): its default branch, protected, with no
    Revision yet. Its name has been checked against the grammar of Domain names (lorebase.names) by
    the model; the schema document and the settings are checked here."""
    name = new.name
    try:
        schema = load_schema(new.schema)
    except SchemaError as exc:
        raise Problem(
            422,
            "schema-invalid",
            f"the schema document has {len(exc.problems)} problem(s): {exc}",
            issues=[
                {"path": "schema." + p.split(":", 1)[0], "rule": "schema", "message": p} for p in exc.problems
            ],
        ) from exc
    settings = domain_settings(new.settings or {}, rt.settings)
    default_branch = check_branch_name(new.default_branch or "main", member="default_branch")
    at = utc_now()

    async def create_txn(txn: Txn) -> DomainRow | None:
        row = await txn.insert_domain(name, default_branch, schema.document, settings, principal.id, at)
        if row is None:
            return None
        await txn.insert_branch(
            row.id,
            default_branch,
            head=None,
            generation=0,
            protected=True,
            from_branch=None,
            fork_generation=None,
            mode="copy",
            by=principal.id,
            at=at,
            chain=[[default_branch, 0, None]],
        )
        await txn.audit(
            principal.id,
            "domain.create",
            at,
            domain=name,
            target=name,
            details={"default_branch": default_branch},
        )
        return row

    row = await rt.db.run_interaction("create_domain", create_txn)
    if row is None:
        raise Problem(409, "already-exists", f"a Domain named {name!r} exists already", domain=name)
    rt.domains.forget(name)
    return describe(row)


# Short names a Domain may use for its overrides (the seed's {"agent_writes": {...}}).
_ALIASES = {"agent_writes": "keeper.agent_writes", "context": "agents.context", "feed": "agents.feed"}


def domain_settings(overrides: dict[str, Any], base: Settings) -> dict[str, Any]:
    """A Domain's setting overrides, checked by the typed settings model (names, types, ranges)
    on top of the process settings `base`; 422 with an issue at `settings.<path>` for each bad one."""
    tree, issues = check_overrides(base, overrides, aliases=_ALIASES)
    issues += _not_per_domain(overrides)
    if issues:
        raise Problem(
            422,
            "validation-failed",
            "; ".join(i["message"] for i in issues),
            issues=[{**i, "path": f"settings.{i['path']}"} for i in issues],
        )
    return tree


# Of the change feed's settings, only this one is read per Domain (at commit); the others belong to
# the feed process (page sizes, scans, heartbeats) and a Domain's value would be ignored: refused.
_FEED_PER_DOMAIN = {"changed_keys_max"}


def _not_per_domain(overrides: dict[str, Any]) -> list[dict[str, str]]:
    feed = overrides.get("feed")
    agents = overrides.get("agents")
    if isinstance(agents, dict) and isinstance(agents.get("feed"), dict):
        feed = {**(feed if isinstance(feed, dict) else {}), **agents["feed"]}
    if not isinstance(feed, dict):
        return []
    return [
        {
            "path": f"feed.{name}",
            "rule": "not_per_domain",
            "message": f"feed.{name} is a setting of the feed process, not of a Domain; "
            f"a Domain may set {', '.join(sorted(_FEED_PER_DOMAIN))}",
        }
        for name in feed
        if name not in _FEED_PER_DOMAIN
    ]


def describe(row: DomainRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "default_branch": row.default_branch,
        "created_at": iso(row.created_at),
        "description": row.schema.get("description", ""),
    }


__all__ = ["create_domain", "describe", "domain_settings"]
