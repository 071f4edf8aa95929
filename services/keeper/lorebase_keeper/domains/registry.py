"""Domains by name: the per-process cache of parsed schemas and effective settings, and the grammar
of branch names. Creating a Domain is administration (admin/domains.py).

A Domain's schema is versioned like its data (docs/schema.md, "Changing a schema"): each Revision
names the schema version it was committed under, so each branch stands on the version of its head
and a read at a Revision on that Revision's. `Domains.get` answers the Domain with its creation
schema and the version of each branch head; `on_branch` and `at_version` answer it with the schema
of a branch or of a version. Versions are content-addressed, so a parsed one is kept for good.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lorebase import names
from lorebase.canonical import canonical_json, sha256_hex
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
    # The version `schema` is (schema_versions.digest), and the creation schema's.
    schema_digest: str = ""
    base_digest: str = ""
    # The schema version of each branch whose head stands on another version than the creation one.
    branch_schemas: Mapping[str, str] = field(default_factory=dict)

    def digest_of(self, branch: str) -> str:
        """The schema version `branch`'s head stands on."""
        return self.branch_schemas.get(branch, self.base_digest)

    @property
    def stored_digest(self) -> str | None:
        """The digest a Revision committed under `schema` stores: None for the creation schema."""
        return None if self.schema_digest == self.base_digest else self.schema_digest


def schema_digest(document: Mapping[str, Any]) -> str:
    """A schema version's digest: the SHA-256 hex of its canonical JSON."""
    return sha256_hex(canonical_json(document))


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
        self._versions: OrderedDict[tuple[int, str], DomainSchema] = OrderedDict()

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
        domain_id = row.id
        branch_schemas = await self.db.read_one(
            "branch_schema_digests", lambda txn: txn.branch_schema_digests(domain_id)
        )
        domain = self._build(row, branch_schemas)
        self._cache[name] = (now + self.ttl_s, domain)
        return domain

    async def on_branch(self, domain: Domain, branch: str) -> Domain:
        """The Domain with the schema `branch`'s head stands on. In a Domain whose schema has changed,
        a branch the cached map does not name (it may be younger than the map) is looked up."""
        digest: str | None = domain.digest_of(branch)
        if branch not in domain.branch_schemas and domain.branch_schemas:
            domain_id = domain.id
            digest = await self.db.read_one(
                "branch_schema_digest", lambda txn: txn.branch_schema_digest(domain_id, branch)
            )
        return await self.at_version(domain, digest)

    async def at_version(self, domain: Domain, digest: str | None) -> Domain:
        """The Domain with the schema of version `digest` (None: the creation schema)."""
        digest = digest or domain.base_digest
        if digest == domain.schema_digest:
            return domain
        return replace(domain, schema=await self.version(domain, digest), schema_digest=digest)

    async def version(self, domain: Domain, digest: str) -> DomainSchema:
        """A schema version of the Domain, parsed (kept per process: a version never changes)."""
        domain_id = domain.id
        cached = self._versions.get((domain_id, digest))
        if cached is not None:
            self._versions.move_to_end((domain_id, digest))
            return cached
        if digest == domain.base_digest:
            document: dict[str, Any] | None = domain.row.schema
        else:
            document = await self.db.read_one(
                "schema_version", lambda txn: txn.schema_version(domain_id, digest)
            )
        if document is None:
            raise Problem(404, "not-found", f"unknown schema version {digest}")
        schema = load_schema(document)
        self._versions[(domain_id, digest)] = schema
        if len(self._versions) > _VERSIONS_KEPT:
            self._versions.popitem(last=False)
        return schema

    def _build(self, row: DomainRow, branch_schemas: Mapping[str, str] | None = None) -> Domain:
        # Overrides stored before they were checked by range are left out where invalid (the
        # process setting applies), so that one bad value cannot break every request on the Domain.
        settings, issues = self.settings.overlay_valid(row.settings)
        for issue in issues:
            logger.warning("Domain %s: setting %s is ignored: %s", row.name, issue["path"], issue["message"])
        base = schema_digest(row.schema)
        schemas = {b: d for b, d in (branch_schemas or {}).items() if d != base}
        schema = self._versions.get((row.id, base))
        if schema is None:  # keyed by content: the same key is the same schema
            schema = load_schema(row.schema)
            self._versions[(row.id, base)] = schema
        domain = Domain(
            id=row.id,
            name=row.name,
            default_branch=row.default_branch,
            schema=schema,
            settings=settings,
            row=row,
            schema_digest=base,
            base_digest=base,
            branch_schemas=schemas,
        )
        return domain


_VERSIONS_KEPT = 256

__all__ = ["Domain", "Domains", "branch_of_revision", "check_branch_name", "schema_digest"]
