"""Domains by name: the per-process cache of parsed schemas and effective settings, and the grammar
of branch names. Creating a Domain is administration (admin/domains.py)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from lorebase import names
from lorebase.config import Settings
from lorebase.problems import Problem
from lorebase.schema import DomainSchema, load_schema
from lorebase_store import Database, DomainRow

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


def branch_of_revision(revision_branch: str) -> str:
    """The branch a Revision's permissions are checked on: a deleted branch's archive name
    (`name~ms`) without its suffix."""
    return revision_branch.split("~", 1)[0]


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

    @staticmethod
    def unknown(name: str) -> Problem:
        """The answer for a Domain that does not exist, or that the caller holds no grant in."""
        return Problem(404, "not-found", f"unknown Domain {name!r}; GET /api/v1/domains lists them")

    async def get(self, name: str) -> Domain:
        now = time.monotonic()
        cached = self._cache.get(name)
        if cached is not None and cached[0] > now:
            return cached[1]
        row = await self.db.read_one("get_domain", lambda txn: txn.get_domain(name))  # one statement
        if row is None:
            raise self.unknown(name)
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


__all__ = ["Domain", "Domains", "check_branch_name"]
