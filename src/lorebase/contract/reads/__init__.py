"""Reads of the graph: one Record and its Links, history, lineage and explanation, diffs, data
health, and the reads whose request is a JSON document (context packs, graph walks, search,
resolve, query).

The reads named by their path and query string are records.py's; those whose request is a JSON
document, documents.py's. `ENDPOINTS` lists them in that order, as they were declared.
"""

from lorebase.contract.reads import documents, records
from lorebase.contract.reads.documents import (
    Aggregate,
    Context,
    ContextBody,
    Depth,
    Neighborhood,
    NeighborhoodBody,
    QueryBody,
    QueryCall,
    Refs,
    RelationPath,
    Resolve,
    ResolveBody,
    Search,
    SearchBody,
    Tokens,
    Traverse,
    TraverseBody,
)
from lorebase.contract.reads.records import (
    MARKDOWN,
    Diff,
    Explain,
    GetHistory,
    GetLinks,
    GetRecord,
    GetRevision,
    Health,
    KindHealth,
    ListLinks,
    ListRecords,
    RecordAt,
    Revision,
)

ENDPOINTS = [*records.ENDPOINTS, *documents.ENDPOINTS]

__all__ = [
    "Aggregate",
    "Context",
    "ContextBody",
    "Depth",
    "Diff",
    "ENDPOINTS",
    "Explain",
    "GetHistory",
    "GetLinks",
    "GetRecord",
    "GetRevision",
    "Health",
    "KindHealth",
    "ListLinks",
    "ListRecords",
    "MARKDOWN",
    "Neighborhood",
    "NeighborhoodBody",
    "QueryBody",
    "QueryCall",
    "RecordAt",
    "Refs",
    "RelationPath",
    "Resolve",
    "ResolveBody",
    "Revision",
    "Search",
    "SearchBody",
    "Tokens",
    "Traverse",
    "TraverseBody",
]
