"""Domains by name: the Domain a request works on (its row, parsed schema and effective settings),
cached per process, and the grammar of branch names. Below authorization and the Runtime: it needs
nothing else of keeper."""

from lorebase_keeper.domains.registry import (
    Domain,
    Domains,
    branch_of_revision,
    check_branch_name,
    schema_digest,
)

__all__ = ["Domain", "Domains", "branch_of_revision", "check_branch_name", "schema_digest"]
