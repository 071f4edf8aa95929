"""The response models of the REST surface, one module per area (lorebase.contract.documents holds
the shapes they share). Each endpoint declaration names its model as `response=`; the OpenAPI
document publishes them, and tests hold real answers to them (they never re-encode an answer)."""

from __future__ import annotations

from lorebase.contract.answers import (
    admin,
    feed,
    governance,
    graph,
    memory,
    proposals,
    records,
    schema,
    web,
    writes,
)

__all__ = [
    "admin",
    "feed",
    "governance",
    "graph",
    "memory",
    "proposals",
    "records",
    "schema",
    "web",
    "writes",
]
