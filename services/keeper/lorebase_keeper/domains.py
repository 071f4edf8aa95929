"""Domains: creation from a schema document, and the per-process cache of parsed schemas."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from lorebase import names
from lorebase.config import Settings, check_overrides
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase.schema import DomainSchema, SchemaError, load_schema
from lorebase_keeper.auth import Principal
from lorebase_store import Database, DomainRow, Txn

logger = logging.getLogger("lorebase.keeper.domains")


@dataclass(frozen=True)
class Domain:
    """A Domain as a request sees it: its row, its parsed schema and its effective settings."""

    id: int
    name: str
    default_branch: str
    schema: DomainSchema
    settings: Settings
    row: DomainRow


def check_branch_name(name: str, *, member: str = "branch") -> str:
    """A branch name following the grammar (lorebase.names.BRANCH), or 400 invalid-branch."""
    problem = names.BRANCH.problem(name)
    if problem is not None:
        raise Problem(400, "invalid-branch", f"{member}: {problem}", member=member)
    return name


class Domains:
    """Loads Domains by name, keeping parsed schemas for a few seconds per process."""

    def __init__(self, db: Database, settings: Settings, *, ttl_s: float = 5.0) -> None:
        self.db = db
        self.settings = settings
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, Domain]] = {}

    def forget(self, name: str | None = None) -> None:
        if name is None:
            self._cache.clear()
        else:
            self._cache.pop(name, None)

    async def get(self, name: str) -> Domain:
        now = time.monotonic()
        cached = self._cache.get(name)
        if cached is not None and cached[0] > now:
            return cached[1]
        row = await self.db.read("get_domain", lambda txn: txn.get_domain(name))
        if row is None:
            raise Problem(404, "not-found", f"unknown Domain {name!r}; GET /api/v1/domains lists them")
        domain = self._build(row)
        self._cache[name] = (now + self.ttl_s, domain)
        return domain

    def _build(self, row: DomainRow) -> Domain:
        # Overrides stored before they were checked by range are left out where invalid (the
        # process setting applies), so that one bad value cannot break every request on the Domain.
        settings, issues = self.settings.overlay_valid(row.settings)
        for issue in issues:
            logger.warning("Domain %s: setting %s is ignored: %s", row.name, issue["path"], issue["message"])
        return Domain(
            id=row.id,
            name=row.name,
            default_branch=row.default_branch,
            schema=load_schema(row.schema),
            settings=settings,
            row=row,
        )

    async def create(self, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        if not principal.is_admin:
            raise Problem(403, "forbidden", "only the admin principal creates Domains")
        allowed = {"name", "schema", "settings", "default_branch"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise Problem(
                422,
                "validation-failed",
                f"unknown member(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}",
            )
        name = body.get("name")
        problem = names.DOMAIN.problem(name)
        if problem is not None or not isinstance(name, str):
            raise Problem(
                422,
                "validation-failed",
                f"name: {problem}",
                issues=[{"path": "name", "rule": "domain.name", "message": str(problem)}],
            )
        document = body.get("schema")
        if document is None:
            raise Problem(422, "validation-failed", "schema is required: a schema document (docs/schema.md)")
        try:
            schema = load_schema(document)
        except SchemaError as exc:
            raise Problem(
                422,
                "schema-invalid",
                f"the schema document has {len(exc.problems)} problem(s): {exc}",
                issues=[
                    {"path": "schema." + p.split(":", 1)[0], "rule": "schema", "message": p}
                    for p in exc.problems
                ],
            ) from exc
        settings = domain_settings(
            body["settings"] if body.get("settings") is not None else {}, self.settings
        )
        default_branch = check_branch_name(body.get("default_branch") or "main", member="default_branch")
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

        row = await self.db.run_interaction("create_domain", create_txn)
        if row is None:
            raise Problem(409, "already-exists", f"a Domain named {name!r} exists already", domain=name)
        self.forget(name)
        return describe(row)


# Short names a Domain may use for its overrides (the seed's {"agent_writes": {...}}).
_ALIASES = {"agent_writes": "keeper.agent_writes", "context": "agents.context", "feed": "agents.feed"}


def domain_settings(overrides: Any, base: Settings) -> dict[str, Any]:
    """A Domain's setting overrides, checked by the typed settings model (names, types, ranges)
    on top of the process settings `base`; 422 with an issue at `settings.<path>` for each bad one."""
    if not isinstance(overrides, dict):
        raise Problem(
            422,
            "validation-failed",
            "settings must be an object of setting overrides",
            issues=[{"path": "settings", "rule": "type", "message": "settings must be an object"}],
        )
    tree, issues = check_overrides(base, overrides, aliases=_ALIASES)
    if issues:
        raise Problem(
            422,
            "validation-failed",
            "; ".join(i["message"] for i in issues),
            issues=[{**i, "path": f"settings.{i['path']}"} for i in issues],
        )
    return tree


def describe(row: DomainRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "default_branch": row.default_branch,
        "created_at": iso(row.created_at),
        "description": row.schema.get("description", ""),
    }


__all__ = ["Domain", "Domains", "check_branch_name", "describe"]
